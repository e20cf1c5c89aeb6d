"""The reference's remaining tools: differentials, sizes, algebra_dim, Bruner's format (golden, round trip, bad
files) and algebraic Mahowald invariants."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from algebra.module.loader import load_module
from nassau.api import request as api
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.tools.bruner import BrunerError, bruner_text, read_bruner
from nassau.tools.mahowald import mahowald_lines
from tests.helpers import golden, run_cli

BRUNER = Path(__file__).parent / "data" / "bruner"


def _ok(*args: str) -> str:
    out = run_cli(*args, *(["--quiet"] if args[0] not in ("algebra-dim", "mahowald-invariant") else []))
    assert out.returncode == 0, out.stderr
    return out.stdout.decode()


@pytest.mark.parametrize(("algorithm", "file"), [("standard", "differentials-S_2-milnor"),
                                                 ("nassau", "differentials-S_2-nassau")])
def test_differentials_golden(algorithm: str, file: str) -> None:
    assert _ok("differentials", "S_2@milnor", "--stem", "10", "--max-s", "5", "--algorithm", algorithm) == golden(file)


def test_sizes_goldens() -> None:
    assert _ok("sizes", "S_2", "--stem", "5", "--max-s", "5") == golden("num_gens-S_2")
    assert _ok("sizes", "S_2", "--stem", "30", "--max-s", "7", "--table", "resolution-size") == \
        golden("resolution_size-S_2")


def test_algebra_dim_golden() -> None:
    assert _ok("algebra-dim") == golden("algebra_dim")
    assert _ok("algebra-dim", "--max-degree", "8", "--prime", "3").splitlines()[4:] == \
        ["dim A_4 = 1", "dim A_5 = 2", "dim A_6 = 1", "dim A_7 = 0", "dim A_8 = 1"]  # P1; beta P1, P1 beta; ...


def test_unstable_dumps_agree_with_the_chart() -> None:
    """num_gens of the unstable resolution of S^3 are its chart; its free modules are smaller than stable ones."""
    gens = _ok("sizes", "S_2[3]", "--stem", "10", "--max-s", "3", "--unstable")
    dims = {(int(n), int(s)): int(c) for n, s, c in (line.split(",") for line in gens.splitlines()) if int(c)}
    assert dims == api.resolve("S_2[3]", stem=10, max_s=3, unstable=True, progress=False).dims
    unstable = _ok("sizes", "S_2[3]", "--stem", "10", "--max-s", "3", "--unstable", "--table", "resolution-size")
    stable = _ok("sizes", "S_2[3]", "--stem", "10", "--max-s", "3", "--table", "resolution-size")
    # F(3) in degrees 3..: 1, Sq1, Sq2, Sq3 and Sq(2)Sq(1)... only excess <= 3: dim A_4 = 2 but Sq4 is dropped
    assert unstable.splitlines()[-1].split(", ")[:5] == ["1", "1", "1", "2", "1"]
    assert stable.splitlines()[-1].split(", ")[:5] == ["1", "1", "1", "2", "2"]
    stable_d = _ok("differentials", "S_2[3]", "--stem", "10", "--max-s", "3")
    unstable_d = _ok("differentials", "S_2[3]", "--stem", "10", "--max-s", "3", "--unstable")
    assert "P(4) x_(3,0,0)" in stable_d and "P(4) x_(3,0,0)" not in unstable_d  # excess 4 > 3


def test_bruner_golden() -> None:
    assert _ok("bruner", str(BRUNER), "--stem", "20") == golden("bruner")
    # --max-s S compares the filtrations s <= S only: the golden's lines for them
    lines = golden("bruner").splitlines()
    low = [line for line in lines[1:] if int(line.split(",")[1]) <= 3]
    assert _ok("bruner", str(BRUNER), "--stem", "20", "--max-s", "3").splitlines() == lines[:1] + low
    assert _ok("bruner", str(BRUNER), "--stem", "20", "--algorithm", "standard") == golden("bruner")


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_save_bruner_round_trip(tmp_path: Path, algorithm: str) -> None:
    """Ours written in Bruner's format reads back as the same resolution, and compares to ours as the identity."""
    _ok("save-bruner", "S_2", "--stem", "18", "--max-s", "6", "-o", str(tmp_path), "--algorithm", algorithm)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"hDiff.{s}" for s in range(7)]
    module = load_module("S_2")
    region = Region(max_s=6, min_degree=0, max_stem=18)
    ours = resolve(module, region, algorithm)
    back, reach = read_bruner(tmp_path, load_module("S_2"))
    assert reach == {s: 18 + s for s in range(7)}
    for s in range(1, 7):
        assert list(back.free(s).gen_degrees) == list(ours.free(s).gen_degrees)
        for g in range(ours.free(s).num_gens):
            t = int(ours.free(s).gen_degrees[g])
            mine = ours.free(s - 1).element_string(t, *ours.differential(s).output(g))
            assert back.free(s - 1).element_string(t, *back.differential(s).output(g)) == mine
        assert bruner_text(back, s, reach[s]) == (tmp_path / f"hDiff.{s}").read_text()
    lines = _ok("bruner", str(tmp_path), "--stem", "18", "--algorithm", algorithm).splitlines()[1:]
    assert lines and all(line.endswith("= [1]") or _is_identity_row(line) for line in lines)


def _is_identity_row(line: str) -> bool:
    j = int(line.split(",")[2].split(")")[0])
    row = [int(x) for x in line.split("[")[1].rstrip("]").split(",")]
    return row == [int(i == j) for i in range(len(row))]


def test_save_bruner_format() -> None:
    """The reference's intended save_bruner output for S_2 through stem 3, s <= 2 (REFERENCE-UNSTABLE 4.3)."""
    module = load_module("S_2")
    region = Region(max_s=2, min_degree=0, max_stem=3)
    res = resolve(module, region, "standard")
    assert bruner_text(res, 0, 3) == "        1        3\n\n0\n\n1\n0 0 1 i(0).\n\n\n\n"
    assert bruner_text(res, 1, 4) == ("        3        4\n\n1\n\n1\n0 1 1 i(1).\n\n2\n\n1\n0 2 1 i(2).\n\n4\n\n1\n"
                                      "0 4 2 i(4).\n\n")
    assert bruner_text(res, 2, 5) == ("        3        5\n\n2\n\n1\n0 1 1 i(1).\n\n4\n\n2\n0 3 2 i(0,1).\n"
                                      "1 2 1 i(2).\n\n5\n\n3\n0 4 2 i(4).\n1 3 2 i(0,1).\n2 1 1 i(1).\n\n")


def _damaged(tmp_path: Path, name: str, edit) -> Path:
    for f in BRUNER.glob("hDiff.*"):
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / name
    path.write_text(edit(path.read_text()))
    return tmp_path


@pytest.mark.parametrize(("name", "edit", "says"), [
    ("hDiff.3", lambda text: text[:700], "hDiff.3"),                                     # truncated mid-file
    ("hDiff.5", lambda text: text.rsplit("\n", 4)[0] + "\n", "truncated"),                # cut at its end
    ("hDiff.2", lambda text: text.replace("0 7 4 i(7).", "0 7 5 i(7).", 1), "dim A_7 = 4"),  # wrong D
    ("hDiff.2", lambda text: text.replace("0 3 2 i(3).", "0 3 2 i(4).", 1), "degree 4, not 3"),
    ("hDiff.2", lambda text: text.replace("0 3 2 i(3).", "0 3 2 i(0,1).", 1), "chain complex"),  # d d != 0
    ("hDiff.2", lambda text: text.replace("0 3 2 i(3).", "7 3 2 i(3).", 1), "generator 7"),
    ("hDiff.2", lambda text: text.replace("1 2 1 i(2).", "1 2 1 i(2)", 1), "expected a term"),
    ("hDiff.4", lambda text: text.replace("        11", "        12", 1), "truncated"),  # header claims more
    ("hDiff.0", lambda text: text.replace("i(0).", "i(1)."), "F_0"),
])
def test_bad_bruner_files(tmp_path: Path, name: str, edit, says: str) -> None:
    directory = _damaged(tmp_path, name, edit)
    with pytest.raises(BrunerError) as caught:
        read_bruner(directory, load_module("S_2"))
    assert says in str(caught.value)
    out = run_cli("bruner", str(directory), "--stem", "20", "--quiet")
    err = out.stderr.decode()
    assert out.returncode == 2 and out.stdout == b"" and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [["bruner", "/nonexistent/dir"], ["bruner", str(BRUNER), "--stem", "24"],
                                  ["save-bruner", "C2", "--stem", "4", "-o", "/tmp/never-written"],
                                  ["algebra-dim", "--prime", "4"], ["mahowald-invariant", "--max-k", "0"]])
def test_bad_tool_input(args: list[str]) -> None:
    out = run_cli(*args)
    assert out.returncode == 2 and out.stderr.decode().count("\n") == 1
    assert not Path("/tmp/never-written").exists()


def test_mahowald_invariants() -> None:
    """M(h0) = h1, M(h1) = h2, M(h2) = h3, M(h1^2) = h2^2, ...: REFERENCE-UNSTABLE 5 with K = 7."""
    assert list(mahowald_lines(7)) == [
        "M({basis element}) = {mahowald_invariant}[ mod {indeterminacy}]",
        "M(x_(0, 0, 0)) = x_(0, 0, 0)", "M(x_(0, 1, 0)) = x_(1, 1, 0)", "M(x_(0, 2, 0)) = x_(2, 2, 0)",
        "M(x_(1, 1, 0)) = x_(3, 1, 0)", "M(x_(0, 3, 0)) = x_(3, 3, 0)", "M(x_(2, 2, 0)) = x_(6, 2, 0)",
        "M(x_(3, 1, 0)) = x_(7, 1, 0)", "M(x_(3, 2, 0)) = x_(8, 2, 0)", "M(x_(3, 3, 0)) = x_(9, 3, 0)"]


@pytest.mark.slow
def test_mahowald_invariants_through_k25() -> None:
    out = _ok("mahowald-invariant", "--max-k", "25").splitlines()
    assert len(out) == 59 and out[-1] == "M(x_(21, 3, 0)) = x_(45, 3, 0)"
    for line in ("M(x_(0, 4, 0)) = x_(7, 4, 0)", "M(x_(14, 3, 0)) = x_(31, 3, 1)",
                 "M(x_(17, 6, 0)) = x_(40, 6, 0) + x_(40, 6, 1)", "M(x_(14, 6, 0)) = x_(38, 6, 0) mod <x_(38, 6, 1)>"):
        assert line in out
