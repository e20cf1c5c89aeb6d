"""Unstable Ext: the excess order, free unstable modules against a slow twin, the reference's unstable goldens,
the stable range, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from algebra.free.free_map import FreeMap
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.products import multiply
from algebra.milnor.profile import FULL
from algebra.module.loader import load_module
from algebra.unstable.basis import UnstableBasis, excess
from algebra.unstable.free_module import UnstableFreeModule
from charts.text import text_chart
from nassau.api import request as api
from nassau.engine.region import Region
from nassau.engine.resolve import UNSTABLE, resolve
from nassau.products.filtration_one import op_column
from tests.helpers import golden, run_cli


def _stable(p: int) -> MilnorBasis | OddMilnorBasis:
    return MilnorBasis(FULL) if p == 2 else OddMilnorBasis(p, FULL)


def _excess_of(basis, elem) -> int:
    if basis.prime == 2:
        return sum(elem)
    e, r = elem
    return e.bit_count() + 2 * sum(r)


@pytest.mark.parametrize("p", [2, 3, 5])
def test_order_is_the_stable_order_sorted_by_excess(p: int) -> None:
    stable, unstable = _stable(p), UnstableBasis(_stable(p))
    for d in range(40):
        elems = [stable.element(d, i) for i in range(stable.dimension(d))]
        want = sorted(elems, key=lambda x: _excess_of(stable, x))  # Python's sort is stable
        assert [unstable.element(d, i) for i in range(unstable.dimension(d))] == want
        assert [unstable.index(x) for x in want] == list(range(len(want)))
        assert list(excess(stable, stable.words(d))) == [_excess_of(stable, x) for x in elems]
        for e in range(-1, d + 2):
            count = sum(_excess_of(stable, x) <= e for x in elems) if e >= 0 else 0
            assert unstable.unstable_dimension(d, e) == count
    # Sq(d) (P(k) in degree k q at odd p) has the largest excess, so it is last
    q = 1 if p == 2 else 2 * (p - 1)
    last = unstable.element(4 * q, unstable.dimension(4 * q) - 1)
    assert last == ((4,) if p == 2 else (0, (4,)))


def _twin_matrix(fm: FreeMap, t: int) -> np.ndarray:
    """The unstable matrix product by product: the stable product, terms of excess > deg h dropped, placed at
    their unstable positions in h's block."""
    src, tgt, alg = fm.source, fm.target, fm.source.algebra
    off_src, off_tgt = src.offsets(t), tgt.offsets(t - fm.shift)
    out = np.zeros((int(off_src[-1]), int(off_tgt[-1])), dtype=np.int64)
    for g in range(len(off_src) - 1):
        rdeg = t - int(src.gen_degrees[g])
        for a in range(int(off_src[g + 1] - off_src[g])):
            r = alg.element(rdeg, a)
            for k in range(int(fm.term_start[g]), int(fm.term_start[g + 1])):
                h = int(fm.term_gen[k])
                srt = alg.unpack(int(fm.term_s[k]))
                prod = multiply(alg.stable, r, srt)
                d = rdeg + int(fm.term_sdeg[k])
                for i in np.nonzero(prod)[0]:
                    elem = alg.stable.element(d, int(i))
                    if _excess_of(alg.stable, elem) <= int(tgt.gen_degrees[h]):
                        out[off_src[g] + a, off_tgt[h] + alg.index(elem)] ^= 1
    return out


def test_unstable_products_match_the_twin(rng: np.random.Generator) -> None:
    alg = UnstableBasis(MilnorBasis(FULL))
    src, tgt = UnstableFreeModule(alg, "F"), UnstableFreeModule(alg, "G")
    for deg in (0, 1, 2, 3, 5, 6):
        tgt.add_generators(deg, [f"y{deg}"])
    for deg in (4, 7, 9):
        src.add_generators(deg, [f"x{deg}a", f"x{deg}b"])
    fm = FreeMap(src, tgt)
    for deg in (4, 7, 9):
        width = tgt.dimension(deg)
        vectors = rng.integers(0, 2, size=(2, width)).astype(bool)
        fm.add_outputs(deg, _pack(vectors), tgt.num_gens)
    for t in range(9, 20):
        fast = fm.matrix(t)
        ncols = tgt.dimension(t)
        bits = np.unpackbits(fast.view(np.uint8), axis=1, bitorder="little")[:, :ncols]
        assert (bits == _twin_matrix(fm, t)).all(), t
        assert tgt.dimension(t) < tgt.product_offsets(t)[-1]  # terms really were dropped


def _pack(bits: np.ndarray) -> np.ndarray:
    words = (bits.shape[1] + 63) // 64
    padded = np.zeros((bits.shape[0], words * 64), dtype=np.uint8)
    padded[:, :bits.shape[1]] = bits
    return np.packbits(padded, axis=1, bitorder="little").view(np.uint64)


def test_stable_free_modules_keep_their_layout() -> None:
    """The stable path writes straight into its blocks: no excess map, the same offsets."""
    res, _ = _resolve("S_2", stem=5, max_s=2, algorithm="standard")
    f1 = res.free(1)
    assert f1.excess_columns(6) is None and f1.product_offsets(6) is f1.offsets(6)


def _resolve(name: str, stem: int, max_s: int, algorithm: str = UNSTABLE):
    module = load_module(name)
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    return resolve(module, region, algorithm), region


def test_resolve_unstable_s7_golden() -> None:
    out = run_cli("resolve-unstable", "S_2[7]", "--stem", "37", "--max-s", "7", "--quiet", "--threads", "2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("resolve_unstable-S_2^7")


def test_mislabelled_s3_golden_is_the_stable_chart() -> None:
    assert golden("resolve_unstable-S_3^7").startswith("·")
    out = run_cli("resolve", "S_3[7]", "--max-t", "57", "--max-s", "10", "--quiet")
    assert out.stdout.decode() == golden("resolve_unstable-S_3^7")


def test_odd_prime_unstable_chart() -> None:
    """resolve_unstable S_3[7] "" 20 4, as REFERENCE-UNSTABLE 1.3 gives it."""
    want = ["·" + " " * 27, "·" + " " * 19 + "· ·   · ", "·" + " " * 13 + "·     · ·     ",
            "·     ·               ·     ", "·" + " " * 27]
    ext = api.resolve("S_3[7]", stem=20, max_s=4, unstable=True, progress=False)
    assert ext.text() == "\n".join(want) + "\n\n"


def test_unstable_suspension_golden() -> None:
    out = run_cli("unstable-suspension", "S_2", "--stem", "10", "--max-s", "7", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("unstable_suspension-S_2")


@pytest.mark.parametrize(("module", "name", "file"), [("S_2", "$S^{%}$", "unstable_chart-S_2"),
                                                      ("RP_inf", "$\\Sigma^{%} \\mathbb{R}P^\\infty$",
                                                       "unstable_chart-RPinf")])
def test_unstable_chart_golden(module: str, name: str, file: str, tmp_path) -> None:
    out = run_cli("unstable-chart", module, "--stem", "6", "--max-s", "4", "--title", name, "--quiet",
                  "--svg-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden(file)
    assert len(list(tmp_path.glob("*.svg"))) == out.stdout.decode().count("\\begin{figure}")


def test_facts() -> None:
    """F(0) = F2, so Ext_U(S^0) is F2 alone; Sq^8 kills the class of S^7, so Ext_U^1(S^7) is h0, h1, h2."""
    s0 = api.resolve("S_2", stem=12, max_s=5, unstable=True, progress=False).dims
    assert s0 == {(0, 0): 1}
    s7 = api.resolve("S_2[7]", stem=7 + 12, max_s=3, unstable=True, progress=False)
    assert sorted(n - 7 for (n, s) in s7.dims if s == 1) == [0, 1, 3]
    res = s7.resolution
    assert op_column(res, 0, 7, 2) is not None and op_column(res, 0, 7, 3) is None  # Sq^8 has excess 8 > 7
    assert not any(p.op == "h3" and p.source[:2] == (7, 0) for p in s7.products)
    assert any(p.op == "h2" and p.source[:2] == (7, 0) for p in s7.products)


@pytest.mark.parametrize("k", [6, 9])
def test_stable_range(k: int) -> None:
    """Ext_U(Sigma^k F2) is the stable Ext below relative stem k - 1, and differs at k - 1."""
    stable = api.resolve("S_2", stem=k + 1, max_s=6, progress=False).dims
    unstable = api.resolve(f"S_2[{k}]", stem=2 * k + 1, max_s=6, unstable=True, progress=False).dims
    shifted = {(n - k, s): d for (n, s), d in unstable.items()}
    below = {b: d for b, d in stable.items() if b[0] <= k - 2}
    assert {b: d for b, d in shifted.items() if b[0] <= k - 2} == below
    assert {b: d for b, d in shifted.items() if b[0] == k - 1} != {b: d for b, d in stable.items() if b[0] == k - 1}


def test_save_dir_resumes_and_is_not_stable(tmp_path) -> None:
    save = str(tmp_path / "run")
    first = run_cli("resolve-unstable", "S_2[5]", "--stem", "14", "--max-s", "5", "--save-dir", save, "--quiet")
    again = run_cli("resolve-unstable", "S_2[5]", "--stem", "16", "--max-s", "5", "--save-dir", save, "--quiet")
    fresh = run_cli("resolve-unstable", "S_2[5]", "--stem", "16", "--max-s", "5", "--quiet")
    assert first.returncode == again.returncode == 0
    assert again.stdout == fresh.stdout
    assert run_cli("chart", save).stdout == fresh.stdout
    stable = run_cli("resolve", "S_2[5]", "--stem", "16", "--max-s", "5", "--save-dir", save, "--quiet")
    assert stable.returncode == 2 and b"unstable" in stable.stderr


@pytest.mark.parametrize(("module", "says"), [("C2", "P(1) x0 is nonzero"), ("S_2[-1]", "negative degree"),
                                              ("Joker", "not an unstable module"), ("C2v14", "cofiber"),
                                              ("A-mod-Sq1-Sq2[3]", "P(4) x0")])
def test_not_unstable(module: str, says: str) -> None:
    for command in ("resolve-unstable", "unstable-chart", "unstable-suspension"):
        out = run_cli(command, module, "--stem", "8", "--max-s", "3", "--quiet")
        err = out.stderr.decode()
        assert out.returncode == 2 and out.stdout == b""
        assert err.count("\n") == 1 and says in err and "Traceback" not in err


def test_text_is_the_api_text() -> None:
    ext = api.resolve("RP_inf", stem=10, max_s=4, unstable=True, progress=False)
    assert text_chart(ext.chart) == ext.text() == run_cli("resolve-unstable", "RP_inf", "--stem", "10", "--max-s",
                                                          "4", "--quiet").stdout.decode()


def test_threads_give_the_same_resolution() -> None:
    """Every output of an unstable run is the same for any number of threads (differentials included)."""
    args = ["differentials", "RP_inf", "--stem", "16", "--max-s", "5", "--unstable", "--quiet"]
    one, two = run_cli(*args, "--threads", "1"), run_cli(*args, "--threads", "2")
    assert one.returncode == 0 and one.stdout == two.stdout and one.stdout.count(b"\n") > 30
    args = ["unstable-suspension", "C2[1]", "--stem", "7", "--max-s", "4", "--quiet"]
    assert run_cli(*args, "--threads", "1").stdout == run_cli(*args, "--threads", "2").stdout


def test_odd_prime_family() -> None:
    """unstable-chart works at p = 3 (a_0 and h_0 lines); the suspension maps are refused there in one line."""
    chart = run_cli("unstable-chart", "S_3", "--stem", "8", "--max-s", "3", "--quiet")
    assert chart.returncode == 0 and chart.stdout.count(b"\\begin{figure}") == 11 and b"[h_0]" in chart.stdout
    maps = run_cli("unstable-suspension", "S_3", "--stem", "8", "--max-s", "3", "--quiet")
    assert maps.returncode == 2 and maps.stdout == b"" and b"p = 2 only" in maps.stderr
