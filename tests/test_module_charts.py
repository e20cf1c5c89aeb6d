"""Charts of every module kind: all bundled p = 2 files resolve, goldens byte for byte, and identities."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from algebra.module.loader import load_module
from algebra.module.spec import bundled_dir
from charts.text import graded_dimension_string, text_chart
from nassau.api.chart_data import build_chart
from nassau.engine.cofiber import CofiberSpec
from nassau.engine.region import Region
from nassau.engine.resolve import choose_algorithm, resolve
from nassau.products.filtration_one import product_matrices
from tests.helpers import dims_in, golden, run_cli

P2 = sorted(p.stem for p in bundled_dir().glob("*.json") if json.loads(p.read_text())["p"] == 2)


def run(module: str, algorithm: str = "auto", threads: int = 1, *, stem: int | None = None,
        max_t: int | None = None, max_s: int = 15) -> tuple:
    m = load_module(module)
    region = Region(max_s=max_s, min_degree=m.min_degree, max_stem=stem, max_t=max_t)
    return resolve(m, region, choose_algorithm(m, algorithm), threads), region, m


def test_every_p2_file_is_listed() -> None:
    assert len(P2) == 32 and {"j", "ksp", "RP_inf", "tmf_RP", "C2v14", "C4", "Ceta2", "A-mod-Sq1-Sq2-Sq4"} <= set(P2)


@pytest.mark.parametrize("name", P2)
def test_every_p2_module_resolves_and_passes_the_euler_check(name: str) -> None:
    """Through stem 30 (s <= 15); then for t <= min + 15, where no higher filtration reaches:
    sum_s (-1)^s sum_{g in F_s} dim A_{t-|g|} = sum_s (-1)^s dim C_{s,t} (REFERENCE-MODULES 8.6)."""
    res, region, m = run(name, stem=30, max_s=15)
    assert all(res.is_done(*b) for b in region.bidegrees())
    alg, lo = res.algebra, m.min_degree
    spec = CofiberSpec.read(m)
    for t in range(lo, lo + 16):
        lhs = sum((-1) ** s * k * alg.dimension(t - u) for (s, u), k in res.dims().items() if u <= t)
        rhs = res.module.dimension(t)  # F2 over A(n) when the change of rings resolved A//A(n)
        if spec is not None:
            rhs += (-1) ** (spec.s - 1) * m.dimension(lo + t - spec.t)
        assert lhs == rhs, (name, t)


@pytest.mark.parametrize("name,module,span", [
    ("resolve-C2v14", "C2v14", {"max_t": 30, "max_s": 15}),
    ("resolve-RP_-4_inf", "RP_-4_inf", {"max_t": 30, "max_s": 15}),
    ("resolve-ko[-2]", "A-mod-Sq1-Sq2[-2]@adem", {"max_t": 30, "max_s": 15}),
    ("resolve-tmf2_adem", "A-mod-Sq1-Sq2-Sq4@adem", {"max_t": 30, "max_s": 15}),
])
@pytest.mark.parametrize("algorithm", ["auto", "standard"])
def test_golden_charts(name: str, module: str, span: dict, algorithm: str) -> None:
    res, region, _ = run(module, algorithm, **span)
    assert text_chart(build_chart(res, region, module, algorithm, products=False)) == golden(name)


def test_ext_m_n_golden() -> None:
    out = run_cli("ext", "C2", "C2", "--stem", "30", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("ext_m_n-C2-C2")


@pytest.mark.parametrize("m,n", [("C2", "C2"), ("Ceta", "C2"), ("Joker", "C2"), ("RP4", "C2")])
def test_ext_into_c2_is_ext_of_the_tensor_with_its_dual(m: str, n: str) -> None:
    """Ext_A(M, N) = Ext_A(M (x) DN, F2), and D C2 = C2[-1] (REFERENCE-MODULES 5)."""
    out = run_cli("ext", m, n, "--stem", "20", "--max-s", "8", "--quiet")
    assert out.returncode == 0, out.stderr
    res, region, _ = run(f"{m}^C2[-1]", stem=20, max_s=8)
    chart = build_chart(res, region, "", "", products=False)
    assert out.stdout.decode() == graded_dimension_string(chart)


@pytest.mark.parametrize("quotient,algebra_module", [("A-mod-Sq1-Sq2", "ko"), ("A-mod-Sq1-Sq2-Sq4", "tmf2")])
def test_change_of_rings(quotient: str, algebra_module: str) -> None:
    """Ext_A(A//A(n)) = Ext_{A(n)}(F2), through stem 60: the quotient over A, its change of rings, and the
    bundled module over A(n) give one chart."""
    over_a, region, _ = run(quotient, "standard", stem=60, max_s=15)
    fast, _, _ = run(quotient, "auto", stem=60, max_s=15)
    direct, _, _ = run(algebra_module, "auto", stem=60, max_s=15)
    assert dims_in(over_a, region) == dims_in(fast, region) == dims_in(direct, region)
    assert fast.algebra.profile != over_a.algebra.profile  # auto really took the subalgebra


def _rp_file(tmp_path: Path, bottom: int, top: int) -> str:
    path = tmp_path / f"rp_{bottom}_{top}.json".replace("-", "m")
    path.write_text(json.dumps({"p": 2, "type": "real projective space", "min": bottom, "max": top}))
    return str(path)


@pytest.mark.parametrize("bottom,top,period", [(1, 6, 8), (-4, 3, 8), (3, 10, 8), (-5, 2, 16)])
def test_james_periodicity(tmp_path: Path, bottom: int, top: int, period: int) -> None:
    """H*(RP_k^{k+m}) = Sigma^{-2^L} H*(RP_{k+2^L}^{k+2^L+m}) when 2^L > m: the charts are shifted copies."""
    a, region, _ = run(_rp_file(tmp_path, bottom, top), max_t=bottom + 30, max_s=10)
    b, region_b, _ = run(_rp_file(tmp_path, bottom + period, top + period), max_t=bottom + period + 30, max_s=10)
    shifted = {(s, t + period): k for (s, t), k in dims_in(a, region).items()}
    assert shifted == dims_in(b, region_b) and sum(shifted.values()) > 20


@pytest.mark.parametrize("module", ["RP_1_10", "C2^Ceta", "Joker^C2", "RP_m3_4"])
def test_nassau_equals_standard_on_finite_new_kinds(tmp_path: Path, module: str) -> None:
    if module.startswith("RP_"):
        bottom, top = (int(x.replace("m", "-")) for x in module.split("_")[1:])
        module = _rp_file(tmp_path, bottom, top)
    a, region, _ = run(module, "standard", stem=30, max_s=12)
    b, _, _ = run(module, "nassau", stem=30, max_s=12)
    assert dims_in(a, region) == dims_in(b, region)


def test_written_tensor_module_has_the_same_chart(tmp_path: Path) -> None:
    path = tmp_path / "ceta_c2.json"
    assert run_cli("tensor", "Ceta", "C2", "-o", str(path)).returncode == 0
    a, region, _ = run("Ceta^C2", stem=30, max_s=10)
    b, _, _ = run(str(path), stem=30, max_s=10)
    assert dims_in(a, region) == dims_in(b, region)


@pytest.mark.parametrize("module", ["RP_inf", "C2v14", "j"])
def test_thread_count_does_not_change_the_resolution(module: str) -> None:
    one, region, _ = run(module, threads=1, stem=24, max_s=10)
    two, _, _ = run(module, threads=2, stem=24, max_s=10)
    assert dims_in(one, region) == dims_in(two, region)
    for s in range(1, 11):
        d1, d2 = one.differential(s), two.differential(s)
        assert d1.num_outputs == d2.num_outputs
        assert all(np.array_equal(d1.output(g)[0], d2.output(g)[0]) for g in range(d1.num_outputs))


def _ext_matrices(max_stem: int, max_s: int) -> tuple[dict, dict]:
    res, region, _ = run("S_2", stem=max_stem, max_s=max_s)
    dims = {(t - s, s): k for (s, t), k in dims_in(res, region).items()}
    mats = {(pm.i, pm.source): pm.matrix for pm in product_matrices(res, region)}
    return dims, mats


def _h(mats: dict, dims: dict, i: int, n: int, s: int) -> np.ndarray:
    return mats.get((i, (n, s)), np.zeros((dims.get((n, s), 0), dims.get((n + (1 << i) - 1, s + 1), 0)), dtype=np.uint8))


def _rank(m: np.ndarray) -> int:
    from fp import from_bool, row_reduce
    return len(row_reduce(from_bool(m.astype(bool)), m.shape[1])) if m.size else 0


@pytest.mark.parametrize("name,i,t_shift", [("C4", 0, 2), ("Ceta2", 1, 4)])
def test_cofiber_by_a_square_is_coker_plus_ker(name: str, i: int, t_shift: int) -> None:
    """For x = h_i^2 in Ext^{2,T}(S): dim Ext^{s,t}(S/x) = dim coker(x: E^{s-2,t-T} -> E^{s,t})
    + dim ker(x: E^{s-1,t-T} -> E^{s+1,t}) (REFERENCE-MODULES 4.4), with x read off the h_i products."""
    dims, mats = _ext_matrices(24, 12)
    shift = t_shift - 2  # stem shift of x

    def x_times(n: int, s: int) -> np.ndarray:
        first = _h(mats, dims, i, n, s)
        return (first.astype(np.int64) @ _h(mats, dims, i, n + (1 << i) - 1, s + 1).astype(np.int64)) % 2

    res, region, _ = run(name, stem=20, max_s=10)
    got = {(t - s, s): k for (s, t), k in dims_in(res, region).items() if k}
    expected = {}
    for n in range(0, 21):
        for s in range(0, 11):
            coker = dims.get((n, s), 0) - (_rank(x_times(n - shift, s - 2)) if s >= 2 else 0)
            ker = 0
            if s >= 1:
                src = (n - shift - 1, s - 1)
                ker = dims.get(src, 0) - _rank(x_times(*src))
            if coker + ker:
                expected[(n, s)] = coker + ker
    assert got == expected


@pytest.mark.parametrize("name", ["C2v14", "C4", "Ceta2"])
def test_a_cofibers_m_rows_are_resolved_by_nassaus_algorithm(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """M of a cofiber (C2, finite over A at p = 2) is resolved by Nassau's algorithm at s >= 2, as a run of M would
    be (a revert makes no Nassau step), and the cofiber's chart is the one a standard M gives (the twin)."""
    from nassau.engine import resolve as engine
    from tests.helpers import run_engine

    steps = []
    real_step = engine.step_nassau
    monkeypatch.setattr(engine, "step_nassau", lambda res, s, t: steps.append((s, t)) or real_step(res, s, t))
    res, region = run_engine(name, stem=40, max_s=12)
    assert steps and all(s >= 2 for s, _ in steps)
    monkeypatch.setattr(engine, "nassau_qualifies", lambda m, as_cofiber=True: "the twin: M's rows standard")
    twin, _ = run_engine(name, stem=40, max_s=12)
    assert dims_in(res, region) == dims_in(twin, region) and sum(dims_in(res, region).values()) > 30
