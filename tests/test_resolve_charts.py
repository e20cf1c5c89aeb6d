"""The engine's charts: the reference's golden outputs byte for byte, and facts any topologist checks."""
from __future__ import annotations

import json

import pytest

from algebra.milnor.subalgebra import optimal_subalgebra
from algebra.module.finite import FDModule
from algebra.module.loader import load_module
from algebra.module.spec import bundled_dir
from charts.text import text_chart
from nassau.api.chart_data import build_chart
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.products.filtration_one import filtration_one_text
from tests.helpers import cli, dims_in, golden, run_engine

GOLDEN_RUNS = [
    ("resolve_through_stem-S_2", "S_2", {"stem": 30, "max_s": 11}),
    ("resolve-S_2", "S_2", {"max_t": 30, "max_s": 11}),
    ("resolve-tmf2", "tmf2", {"max_t": 30, "max_s": 15}),
    ("resolve-ko[-2]", "ko[-2]", {"max_t": 30, "max_s": 15}),
]


# Profile modules (tmf2, ko) are resolved by the standard algorithm only.
CASES = [(*g, "standard") for g in GOLDEN_RUNS] + [(*g, "nassau") for g in GOLDEN_RUNS if g[1] == "S_2"]


@pytest.mark.parametrize("name,module,span,algorithm", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_golden_chart(name: str, module: str, span: dict, algorithm: str) -> None:
    res, region = run_engine(module, algorithm=algorithm, **span)
    chart = build_chart(res, region, module, algorithm, products=False)
    assert text_chart(chart) == golden(name)


def test_cli_prints_the_golden_chart() -> None:
    out = cli("resolve", "S_2", "--stem", "30", "--max-s", "11", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode("utf-8") == golden("resolve_through_stem-S_2")
    assert out.stderr == b""


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_differentials_match_the_references_choices(algorithm: str) -> None:
    """Basis order and generator choices: every differential through n <= 10, s <= 5, as the reference prints it."""
    res, region = run_engine("S_2", stem=10, max_s=5, algorithm=algorithm)
    lines = []
    for n in range(11):
        for s in range(6):
            fs = res.free(s)
            for g in range(fs.gens_below(n + s), fs.gens_below(n + s + 1)):
                if s == 0:
                    lines.append(f"d {fs.gen_names[g]} = 0")
                else:
                    vec, ngens = res.differential(s).output(g)
                    lines.append(f"d {fs.gen_names[g]} = {res.free(s - 1).element_string(n + s, vec, ngens)}")
    # Nassau's algorithm picks other cycles for the same classes, exactly as the reference's Nassau does.
    assert "\n".join(lines) + "\n" == golden(f"differentials-S_2-{'nassau' if algorithm == 'nassau' else 'milnor'}")


@pytest.mark.parametrize("module", ["S_2", "C2"])
def test_filtration_one_golden(module: str) -> None:
    res, region = run_engine(module, stem=10, max_s=5)
    assert filtration_one_text(res, region) == golden(f"filtration_one-{module}")


def test_sphere_facts() -> None:
    res, region = run_engine("S_2", stem=30, max_s=12, algorithm="nassau")
    dims = {(t - s, s): k for (s, t), k in dims_in(res, region).items()}
    # h_i in stem 2^i - 1 and nothing else in filtration 1.
    assert {n for (n, s), k in dims.items() if s == 1 and k} == {0, 1, 3, 7, 15}
    assert all(dims[(0, s)] == 1 for s in range(13))  # the h0 tower
    assert dims[(8, 3)] == 1  # c0
    assert dims[(9, 5)] == 1  # P h1
    assert dims[(14, 4)] == 1 and dims[(15, 4)] == 1  # d0 and h0^3 h4
    assert dims.get((4, 2), 0) == 0 and dims.get((5, 3), 0) == 0


def _euler(dims: dict, t: int, top_s: int) -> int:
    return sum((-1) ** s * dims.get((s, t), 0) for s in range(top_s + 1))


FD2 = sorted(p.stem for p in bundled_dir().glob("*.json")
             if (lambda d: d["p"] == 2 and d["type"] == "finite dimensional module" and "cofiber" not in d)(
                 json.loads(p.read_text())))


@pytest.mark.parametrize("module", FD2)
def test_euler_characteristic_identity(module: str) -> None:
    """sum_s (-1)^s dim Ext^{s,t}(M) = sum over cells c of the same sum for F2 (over the same algebra) at t - |c|."""
    m = load_module(module)
    span = 30
    res, _ = run_engine(module, max_t=m.min_degree + span, max_s=span)
    # F2 over the module's own algebra: one cell in degree 0.
    unit_module = FDModule(name="F2", profile=m.profile, algebra=m.algebra, names={0: ["x0"]})
    sphere = resolve(unit_module, Region(max_s=span, min_degree=0, max_t=span), "standard")
    mine, unit = res.dims(), sphere.dims()
    for t in range(m.min_degree, m.min_degree + span + 1):
        lhs = _euler(mine, t, span)
        rhs = sum(_euler(unit, t - c, span) for c in m.cells)
        assert lhs == rhs, (module, t)


@pytest.mark.parametrize("module", ["C2", "Joker", "Csigma", "RP4", "DA1", "Cnu", "C2_sm_Ceta", "C2[3]"])
def test_nassau_equals_standard(module: str) -> None:
    a, region = run_engine(module, stem=30, max_s=12, algorithm="standard")
    b, _ = run_engine(module, stem=30, max_s=12, algorithm="nassau")
    assert dims_in(a, region) == dims_in(b, region)


def test_nassau_over_a2_equals_standard() -> None:
    """The sphere through stem 60, where Nassau's steps run over [2, 2, 1] and A(2) (the runs above stop short)."""
    a, region = run_engine("S_2", stem=60, max_s=15, algorithm="standard")
    b, _ = run_engine("S_2", stem=60, max_s=15, algorithm="nassau")
    assert {(2, 2, 1), (3, 2, 1)} <= {optimal_subalgebra(s, t).profile for s, t in region.bidegrees() if s >= 2}
    assert dims_in(a, region) == dims_in(b, region)
