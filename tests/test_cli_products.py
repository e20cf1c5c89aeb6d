"""The multiplicative commands (product, map, massey, yoneda, steenrod, sq0): the reference's lines byte for byte, the
JSON they write, and one clear line with status 2 for every kind of bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import assert_one_line_error, golden, run_cli


@pytest.mark.parametrize("algorithm,name", [("standard", "lift_hom-g-S_2"), ("nassau", "lift_hom-g-S_2-nassau")])
def test_product_by_g(algorithm: str, name: str, tmp_path: Path) -> None:
    out = run_cli("product", "S_2", "--by", "g=20,4,[1]", "--stem", "25", "--max-s", "9", "--algorithm", algorithm,
                  "--quiet", "--json", str(tmp_path / "p.json"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden(name)
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["by"] == {"g": {"n": 20, "s": 4, "vector": [1]}}
    assert data["rows"][0] == {"name": "g", "class": [0, 0, 0], "image": [20, 4], "vector": [1]}
    assert len(data["rows"]) == len(golden(name).splitlines())


def test_product_by_several_classes_on_a_module() -> None:
    """C2: h0 times the bottom class lands in the empty (0, 1) (2 = 0 on the Moore spectrum); --by repeats, one
    block per class."""
    out = run_cli("product", "C2", "--by", "h0=0,1,[1]", "--by", "h1=1,1,[1]", "--stem", "6", "--max-s", "3",
                  "--quiet")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert lines[0] == "h0 x_(0, 0, 0) = []"
    assert "h1 x_(0, 0, 0) = [1]" in lines
    assert [x.split()[0] for x in lines] == sorted((x.split()[0] for x in lines), key=["h0", "h1"].index)


@pytest.mark.parametrize("args,name", [
    (["map", "S_2", "Cnu", "--send", "x0=x4", "--degree", "4", "--name", "p", "--stem", "11"], "lift_hom-Cnu-S_2"),
    (["map", "Cnu", "S_2", "--send", "x0=x0", "--name", "i", "--stem", "15"], "lift_hom-S_2-Cnu"),
])
def test_map_is_the_references(args: list[str], name: str, tmp_path: Path) -> None:
    out = run_cli(*args, "--max-s", "15", "--quiet", "--json", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden(name)
    data = json.loads((tmp_path / "m.json").read_text())
    assert len(data["rows"]) == len(golden(name).splitlines())


@pytest.mark.parametrize("args,needle", [
    (["product", "S_2", "--by", "g=30,4,[1]", "--stem", "25", "--max-s", "9"], "outside the computed range"),
    (["product", "S_2", "--by", "g=20,4,[1,0]", "--stem", "25", "--max-s", "9"], "needs a vector of length 1"),
    (["product", "S_2", "--by", "g=20,4", "--stem", "25"], "cannot read the class"),
    (["product", "S_2", "--by", "20,4,[1]", "--stem", "25"], "expected NAME=n,s,[v]"),
    (["map", "S_2", "Cnu", "--send", "x0=x0", "--stem", "8"], "is not A-linear"),
    (["map", "Cnu", "S_2", "--send", "x4=x0", "--degree", "-4", "--stem", "8"], "is not A-linear"),
    (["map", "Cnu", "S_2", "--send", "y=x0", "--stem", "8"], "has no basis element 'y'"),
    (["map", "Cnu", "S_2", "--send", "x4=x0", "--stem", "8"], "must go to degree 4"),
])
def test_bad_input_is_one_clear_line(args: list[str], needle: str) -> None:
    assert_one_line_error(run_cli(*args, "--quiet"), needle)


def test_chart_products_by_named_classes(tmp_path: Path) -> None:
    """--products h1 c0 x=14,4,[1]: the JSON lists those operations, h1 edges are the filtration-one products and the
    c0 edges are the products the product command prints."""
    out = run_cli("resolve", "S_2", "--stem", "20", "--max-s", "7", "--products", "h1,c0", "x=14,4,[1]", "--json",
                  str(tmp_path / "c.json"), "--quiet")
    assert out.returncode == 0, out.stderr
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["operations"] == [{"op": "h1", "shift": [1, 1]}, {"op": "c0", "shift": [8, 3]},
                                  {"op": "x", "shift": [14, 4]}]
    edges = {(p["op"], tuple(p["source"]), tuple(p["target"])) for p in data["products"]}
    assert ("c0", (1, 1, 0), (9, 4, 0)) in edges  # h1 c0 != 0
    assert ("h1", (8, 3, 0), (9, 4, 0)) in edges
    lines = run_cli("product", "S_2", "--by", "c0=8,3,[1]", "--stem", "20", "--max-s", "7", "--quiet")
    want = set()
    for line in lines.stdout.decode().splitlines():
        left, right = line.split(" = ")
        n, s, j = (int(v) for v in left[left.index("(") + 1:-1].split(", "))
        vec = [int(v) for v in right.strip("[]").split(",")] if right != "[]" else []
        want |= {("c0", (n, s, j), (n + 8, s + 3, k)) for k, v in enumerate(vec) if v}
    assert {e for e in edges if e[0] == "c0"} == want and want


def test_chart_from_a_save_dir_takes_products(tmp_path: Path) -> None:
    save = tmp_path / "save"
    assert run_cli("resolve", "C2", "--stem", "12", "--max-s", "5", "--save-dir", str(save), "--quiet").returncode == 0
    out = run_cli("chart", str(save), "--products", "h0", "h1", "c0", "--svg", str(tmp_path / "c.svg"), "--quiet")
    assert out.returncode == 0, out.stderr
    assert 'class="structline c0"' in (tmp_path / "c.svg").read_text()


@pytest.mark.parametrize("ops,needle", [(["foo"], "unknown class 'foo'"), (["c0=8,3,[1,1]"], "needs a vector"),
                                        (["h0,", "g=40,4,[1]"], "outside the computed range")])
def test_bad_chart_products(ops: list[str], needle: str, tmp_path: Path) -> None:
    assert_one_line_error(run_cli("resolve", "S_2", "--stem", "20", "--max-s", "5", "--products", *ops, "--svg",
                            str(tmp_path / "c.svg"), "--quiet"), needle)


def test_products_prints_every_h_i_that_fits() -> None:
    """The reference's filtration_one prints h4, h5, ... wherever the target is computed, not only h0..h3."""
    out = run_cli("products", "S_2", "--stem", "32", "--max-s", "2", "--quiet")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert "h_4 x_(0, 0, 0) = [1]" in lines and "h_5 x_(0, 0, 0) = [1]" in lines
    assert "h_4 x_(15, 1, 0) = [1]" in lines  # h4^2 != 0 at (30, 2)
