"""`nassau resolve --motivic` and `nassau.resolve(..., motivic=True)`: the output names each generator with its
(stem, s, weight), torsion and products; the JSON says the same; --tau-inverted checks against the classical run;
bad input is one line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import nassau
from algebra.module.motivic import load_motivic
from nassau.engine.errors import EngineError
from nassau.engine.motivic import resolve_motivic
from nassau.engine.region import Region
from nassau.products.motivic_ext import MotivicExt
from tests.helpers import assert_one_line_error, run_cli


def test_text_names_generators_torsion_and_products() -> None:
    out = run_cli("resolve", "S_2", "--motivic", "--stem", "12", "--max-s", "6", "--threads", "1", "--quiet")
    assert out.returncode == 0
    lines = out.stdout.decode().splitlines()
    row = {line.split("  ")[0].strip(): line for line in lines if line.startswith("(")}
    assert "tau-free" in row["(0, 2, 0)[0]"] and "h2 tau (3, 3, 3)[0]" in row["(0, 2, 0)[0]"]  # h0^2 h2 = tau h1^3
    assert "tau^1-torsion" in row["(4, 4, 4)[0]"]  # h1^4, killed by tau
    assert "h0 0" in row["(1, 1, 1)[0]"]  # h0 h1 = 0


def test_json_and_max_weight(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    out = run_cli("resolve", "S_2", "--motivic", "--stem", "10", "--max-s", "5", "--max-weight", "3", "--json",
                  str(path), "--threads", "1", "--quiet")
    assert out.returncode == 0
    data = json.loads(path.read_text())
    assert data["max_weight"] == 3 and all(g["weight"] <= 3 for g in data["generators"])
    (h1,) = [g for g in data["generators"] if (g["stem"], g["s"], g["weight"]) == (1, 1, 1)]
    assert h1["torsion"] is None and h1["index"] == 0
    assert h1["products"]["h1"] == [[2, 2, 2, 0, 0]] and h1["products"]["h0"] == []


@pytest.mark.parametrize("module", ["S_2", "C2", "Csigma"])
def test_tau_inverted_mode(module: str) -> None:
    out = run_cli("resolve", module, "--motivic", "--stem", "16", "--max-s", "8", "--tau-inverted", "--threads",
                  "2", "--quiet")
    assert out.returncode == 0 and b"tau inverted: the classical chart" in out.stdout


def test_api_and_threads_agree() -> None:
    one = nassau.resolve("S_2", stem=24, max_s=10, motivic=True, threads=1, progress=False)
    two = nassau.resolve("S_2", stem=24, max_s=10, motivic=True, threads=2, progress=False)
    assert one.json_text() == two.json_text()
    assert [(c.stem, c.s, c.weight) for c in one.generators if c.stem == 14 and c.s == 4] == [(14, 4, 8)]  # d0


@pytest.mark.parametrize("args, needle", [
    (["Joker", "--motivic", "--stem", "10"], "give a 'weights' field"),
    (["tmf2", "--motivic", "--stem", "10"], "finite modules over the whole algebra"),
    (["S_2", "--motivic", "--stem", "10", "--d2"], "--d2 does not go with --motivic"),
    (["S_2", "--stem", "10", "--tau-inverted"], "go with --motivic"),
])
def test_bad_input_is_one_line(args: list[str], needle: str) -> None:
    assert_one_line_error(run_cli("resolve", *args), needle)


def test_inhomogeneous_weights_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"p": 2, "type": "finite dimensional module", "gens": {"x0": 0, "x2": 2},
                                "weights": {"x0": 0, "x2": 2}, "actions": ["Sq2 x0 = x2"]}))
    assert_one_line_error(run_cli("resolve", str(path), "--motivic", "--stem", "5"),
                          "do not make the action homogeneous")
    path.write_text(json.dumps({"p": 2, "type": "finite dimensional module", "gens": {"x0": 0, "x2": 2},
                                "weights": {"x0": 0, "x2": 0}, "actions": ["Sq2 x0 = x2"]}))
    out = run_cli("resolve", str(path), "--motivic", "--stem", "8", "--max-s", "4", "--tau-inverted", "--quiet")
    assert out.returncode == 0  # a lower weight is a tau multiple: Sq2 x0 = tau x2, still a lift of Ceta


def test_api_refuses_what_a_motivic_run_does_not_take() -> None:
    with pytest.raises(EngineError, match="does not take d2"):
        nassau.resolve("S_2", stem=10, motivic=True, d2=True, progress=False)
    with pytest.raises(EngineError, match="max_weight goes with motivic"):
        nassau.resolve("S_2", stem=10, max_weight=3, progress=False)


def test_svg_colours_dots_by_torsion(tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    from charts.motivic_svg import torsion_colour

    path = tmp_path / "m.svg"
    out = run_cli("resolve", "S_2", "--motivic", "--stem", "12", "--max-s", "6", "--svg", str(path), "--threads",
                  "1", "--quiet")
    assert out.returncode == 0
    ns = {"svg": "http://www.w3.org/2000/svg"}
    circles = ET.parse(path).getroot().findall(".//svg:circle", ns)
    # The chart's dots carry a title; the legend's torsion swatches are untitled dots.
    fills = {c.find("svg:title", ns).text: c.get("style") for c in circles if c.find("svg:title", ns) is not None}
    assert len(fills) == len([line for line in out.stdout.decode().splitlines() if line.startswith("(")])
    assert torsion_colour(1) in fills["(4, 4, 4)[0] tau^1-torsion"]
    assert torsion_colour(None) in fills["(1, 1, 1)[0] tau-free"]


def generators_of(out) -> list[str]:
    return sorted(line.split("  ")[0] + line.split()[3] for line in out.stdout.decode().splitlines()
                  if line.startswith("("))


def test_save_and_resume(tmp_path: Path) -> None:
    """A saved run resumes to the same chart; a larger region resumed from it (its top row's kernels recomputed)
    and a run whose last bidegree files were lost give what a fresh run gives; a classical run refuses the
    directory in one line."""
    save = tmp_path / "m"
    args = ("resolve", "S_2", "--motivic", "--max-s", "7", "--threads", "1", "--quiet")
    first = run_cli(*args, "--stem", "14", "--save-dir", str(save))
    assert first.returncode == 0 and not any((save / "cycles").iterdir())
    again = run_cli(*args, "--stem", "14", "--save-dir", str(save))
    assert again.stdout == first.stdout
    lost = sorted((save / "bidegrees").glob("*.bin"), key=lambda p: int(p.stem.split("_")[1]))[-12:]
    for path in lost:
        path.unlink()
    assert generators_of(run_cli(*args, "--stem", "14", "--save-dir", str(save))) == generators_of(first)
    grown = run_cli(*args[:3], "--max-s", "9", "--threads", "1", "--quiet", "--stem", "18", "--save-dir", str(save))
    fresh = run_cli(*args[:3], "--max-s", "9", "--threads", "1", "--quiet", "--stem", "18")
    assert generators_of(grown) == generators_of(fresh)
    assert_one_line_error(run_cli("resolve", "S_2", "--stem", "10", "--save-dir", str(save)), "motivic algorithm")


def test_tau_quotient_field_is_ctau(tmp_path: Path) -> None:
    """A module file with "tau_quotient": true reads Ext with M_2/tau coefficients, as the name Ctau does for S_2."""
    path = tmp_path / "s2tau.json"
    path.write_text(json.dumps({"p": 2, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": [],
                                "tau_quotient": True}))
    args = ("--motivic", "--stem", "10", "--max-s", "5", "--threads", "1", "--quiet")
    by_file, by_name = run_cli("resolve", str(path), *args), run_cli("resolve", "Ctau", *args)
    assert by_file.returncode == 0 and generators_of(by_file) == generators_of(by_name)
    assert "tau^1-torsion" in by_file.stdout.decode() and "tau-free " not in by_file.stdout.decode()


def test_a_run_resolves_no_degree_above_its_region() -> None:
    """Through stem N, s <= S a run resolves t <= N + S (rows s <= S + 1), not the column t = N + S + 1 above it: a
    class at (s, t) is read from the complex in degree t alone. Its generators, torsion orders and products are
    those read from the larger rectangle."""
    stem, max_s = 18, 8
    run = nassau.resolve("S_2", stem=stem, max_s=max_s, motivic=True, progress=False)
    assert max(t for _, t in run.resolution.dims()) == stem + max_s
    larger = Region(max_s=max_s + 1, min_degree=0, max_stem=stem)
    ext = MotivicExt(resolve_motivic(load_motivic("S_2"), larger), max_s + 1, larger.t_limit)

    def key(c):
        return c.stem, c.s, c.weight, c.torsion

    wanted = [c for c in ext.classes if c.s <= max_s and c.stem <= stem]
    assert [key(c) for c in run.generators] == [key(c) for c in wanted]
    for c, d in zip(run.generators, wanted):
        for i in range(4):
            got = run.product(f"h{i}", c)
            if got is not None:
                assert [(key(y), k) for y, k in got] == [(key(y), k) for y, k in ext.h_product(i, d)]


def test_a_product_names_which_generator_of_its_trigrading() -> None:
    """(35, 5, 20) holds two generators (Isaksen, "Stable stems", Table 8 and the Ext chart): h2 d1, tau-free, since
    classically h2 d1 is nonzero (Ext_A^{5,40}), and h1^4 h5 = h1 (h1^3 h5), killed by tau as h1^4 is (tau h1^4 = 0,
    Dugger-Isaksen 5.1). So h2 times d1 (32, 4, 18) is the tau-free one and h1 times h1^3 h5 (34, 4, 19) the other;
    the machine-generated data of Isaksen, Wang and Xu says the same (tests/data/iwx: h2 {4-17} = {5-24}, tau-free;
    h1 {4-19} = {5-26}, tau^1-torsion). Every output names the target with its index there."""
    run = nassau.resolve("S_2", max_t=40, max_s=5, motivic=True, progress=False)
    there = [c for c in run.generators if (c.stem, c.s, c.weight) == (35, 5, 20)]
    assert [(c.index, c.torsion) for c in there] == [(0, None), (1, 1)]  # tau-free first
    h2d1, h1_4h5 = there
    assert run.product("h2", run.generator(32, 4, 18)) == [(h2d1, 0)]
    assert run.product("h1", run.generator(34, 4, 19)) == [(h1_4h5, 0)]
    classical = nassau.resolve("S_2", max_t=40, max_s=5, progress=False)
    assert any(p.op == "h2" and p.source[:2] == (32, 4) and p.target[:2] == (35, 5) for p in classical.products)

    (d1_line,) = [line for line in run.text().splitlines() if line.startswith("(32, 4, 18)[0]")]
    assert "h2 (35, 5, 20)[0] " in d1_line
    (d1,) = [g for g in run.to_json()["generators"] if (g["stem"], g["s"], g["weight"]) == (32, 4, 18)]
    assert d1["index"] == 0 and d1["products"]["h2"] == [[35, 5, 20, 0, 0]]
    with pytest.raises(EngineError, match=r"no generator \(35, 5, 20\)\[2\]"):
        run.generator(35, 5, 20, 2)


@pytest.mark.parametrize("module, options, way", [("S_2", ("--threads", "1"), "(1 thread)"),
                                                  ("S_2", ("--threads", "2"), "(2 threads)"),
                                                  ("Ctau", ("--threads", "2", "--processes"), "(2 processes)")])
def test_summary_line_names_the_workers(module: str, options: tuple[str, ...], way: str) -> None:
    """As a classical run's does: the threads, or the worker processes, the run took."""
    out = run_cli("resolve", module, "--motivic", "--stem", "8", "--max-s", "4", *options)
    assert out.returncode == 0, out.stderr
    line = out.stderr.decode().strip().splitlines()[-1]
    assert line.startswith(f"{module} (C-motivic): ") and way in line, line
