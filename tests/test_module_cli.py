"""Every command on every module kind (resolve and its outputs, products, chart, save and resume, tensor, ext),
and bad module input: one line, status 2, nothing written."""
from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.helpers import assert_one_line_error, run_cli
from tests.test_store import _start, _wait_for_files, files

KINDS = ["j", "RP_inf", "tmf_RP", "C4", "Ceta^C2", "RP_inf^C2", "A-mod-Sq1-Sq2"]


@pytest.mark.parametrize("module", KINDS)
def test_every_command_on_every_kind(tmp_path: Path, module: str) -> None:
    save, out = tmp_path / "save", tmp_path / "out"
    first = run_cli("resolve", module, "--stem", "12", "--max-s", "6", "--save-dir", str(save), "--quiet")
    assert first.returncode == 0, first.stderr
    full = run_cli("resolve", module, "--stem", "16", "--max-s", "6", "--save-dir", str(save), "--json",
                   f"{out}.json", "--svg", f"{out}.svg", "--seqsee", f"{out}.seqsee.json")
    assert full.returncode == 0, full.stderr
    assert "bidegrees loaded" in full.stderr.decode()
    fresh = run_cli("resolve", module, "--stem", "16", "--max-s", "6", "--quiet")
    assert full.stdout == fresh.stdout and fresh.stdout.strip()
    data = json.loads(Path(f"{out}.json").read_text())
    assert data["module"] == module and sum(e["dim"] for e in data["ext"]) > 5
    assert Path(f"{out}.svg").read_text().startswith("<svg") or "<svg" in Path(f"{out}.svg").read_text()[:200]
    chart = run_cli("chart", str(save))
    assert chart.returncode == 0, chart.stderr
    assert chart.stdout == fresh.stdout
    products = run_cli("products", module, "--stem", "16", "--max-s", "6", "--quiet")
    assert products.returncode == 0 and b"h_0 x_(" in products.stdout


def test_kill_and_resume_an_infinite_module(tmp_path: Path) -> None:
    args = ("resolve", "RP_inf", "--stem", "40", "--max-s", "12")
    clean = run_cli(*args, "--quiet").stdout
    save = tmp_path / "save"
    proc = _start(*args, "--threads", "2", "--save-dir", str(save), "--quiet")
    _wait_for_files(proc, save, 80)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    partial = len(files(save))
    assert 80 <= partial < 13 * 41, "the kill should land partway through"
    again = run_cli(*args, "--save-dir", str(save))
    assert again.returncode == 0, again.stderr
    assert again.stdout == clean


def test_tensor_command(tmp_path: Path) -> None:
    out = run_cli("tensor", "C2", "C2")
    assert out.stdout.decode() == ('{"p":2,"type":"finite dimensional module","gens":{"x0.x0":0,"x0.x1":1,"x1.x0":1,'
                                   '"x1.x1":2},"actions":["Sq1 x0.x0 = x0.x1 + x1.x0","Sq2 x0.x0 = x1.x1",'
                                   '"Sq1 x0.x1 = x1.x1","Sq1 x1.x0 = x1.x1"]}\n')
    target = tmp_path / "m.json"
    assert run_cli("tensor", "Joker", "C2[-1]", "-o", str(target)).returncode == 0
    assert json.loads(target.read_text())["gens"]["x0.x0"] == -1


def _module(tmp_path: Path, body: dict) -> str:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(body))
    return str(path)


FD = {"p": 2, "type": "finite dimensional module"}


@pytest.mark.parametrize("body,needle", [
    ({"p": 2, "type": "finitely presented module", "gens": {"x0": 0}, "milnor_relations": ["P(1) y"]},
     "names unknown generator 'y'"),
    ({"p": 2, "type": "finitely presented module", "gens": {"x0": 0, "x1": 1},
      "milnor_relations": ["P(1) x0 + P(2) x1"]}, "inconsistent degree"),
    ({"p": 2, "type": "finitely presented module", "gens": {"x0": 0}, "adem_relations": ["Sq1 x0"]},
     "needs 'milnor_relations'"),
    ({"p": 2, "type": "real projective space", "min": 5, "max": 2}, "max 2 is below min 5"),
    (dict(FD, gens={"x0": 0, "x1": 1}, actions=["Sq1 x0 = x1"], cofiber={"s": 1, "t": 3, "idx": 0}),
     "is not a cocycle"),
    (dict(FD, gens={"x0": 0}, actions=[], cofiber={"s": 2, "t": 2, "idx": 3}),
     "cofiber idx 3 out of range: bidegree (n = 0, s = 2) has 1 generators"),
    (dict(FD, gens={"x0": 0}, actions=[], cofiber={"s": 2, "t": 2}), "missing an integer 'idx'"),
])
def test_bad_module_input(tmp_path: Path, body: dict, needle: str) -> None:
    """The cocycle case is v1 on the mod 2 Moore spectrum, which has no such self-map (v1^4 is C2v14's)."""
    path = _module(tmp_path, body)
    save, chart = tmp_path / "save", tmp_path / "chart.json"
    out = run_cli("resolve", path, "--stem", "20", "--save-dir", str(save), "--json", str(chart))
    assert_one_line_error(out, needle)
    assert path in out.stderr.decode() and not chart.exists()
    assert not save.exists()


def test_bad_tensor_and_ext_input(tmp_path: Path) -> None:
    assert_one_line_error(run_cli("tensor", "C2", "S_3"), "the primes differ")
    assert_one_line_error(run_cli("tensor", "RP_inf", "C2"), "RP_inf^C2 is infinite")
    assert_one_line_error(run_cli("ext", "C2", "RP_inf", "--stem", "10"), "needs a bounded N")
    assert_one_line_error(run_cli("resolve", "j", "--stem", "10", "--algorithm", "nassau"), "it is infinite")
    assert_one_line_error(run_cli("resolve", "j", "--stem", "10", "--algorithm", "change-of-rings"),
                    "change of rings does not apply to j")


def test_modules_lists_every_bundled_module_once() -> None:
    """`nassau modules`: one line per bundled file (46), each with its prime (from the file), kind and a
    description; a module it names resolves by that name; --prime keeps that prime's modules."""
    from algebra.module.catalog import DESCRIPTIONS
    from algebra.module.spec import bundled_dir

    files = {f.stem: json.loads(f.read_text()) for f in bundled_dir().glob("*.json")}
    out = run_cli("modules")
    assert out.returncode == 0 and out.stderr == b"", out.stderr
    header, *lines = out.stdout.decode().splitlines()
    assert header.split()[:5] == ["name", "p", "kind", "over", "cells"] and len(files) == 46
    rows = {line.split()[0]: line for line in lines}
    assert len(lines) == len(rows) and set(rows) == set(files) == set(DESCRIPTIONS)
    for name, line in rows.items():
        assert line.split()[1] == str(files[name]["p"]) and line.endswith(DESCRIPTIONS[name]) and DESCRIPTIONS[name]
    assert "cofiber x_(8,4,0)" in rows["C2v14"] and "A(2)" in rows["tmf2"] and "cells -4..inf" in rows["RP_-4_inf"]
    assert "2 gens, 6 rel" in rows["j"]
    odd = run_cli("modules", "--prime", "3").stdout.decode().splitlines()[1:]
    assert {line.split()[0] for line in odd} == {n for n, d in files.items() if d["p"] == 3}
    assert b"`nassau modules`" in run_cli("resolve", "--help").stdout


@pytest.mark.parametrize("name", ["S_2", "Joker", "DA1", "Z", "RP4", "tmf2_sm_DA1"])
def test_modules_counts_the_cells_the_module_has(name: str) -> None:
    from algebra.module.catalog import bundled
    from algebra.module.loader import load_module

    module = load_module(name)
    cells = sum(module.dimension(d) for d in range(module.min_degree, module.max_degree + 1))
    line = next(e for e in bundled() if e.name == name).cells
    lo, hi = module.min_degree, module.max_degree
    span = f"{lo}" if lo == hi else f"{lo}..{hi}"
    assert line == f"{cells} cell{'s' if cells > 1 else ''} {span}"
