"""Odd primes: the Milnor basis and its product against Milnor's formulas, modules, resolutions and theory facts."""
from __future__ import annotations

import json
from math import comb
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor.odd_basis import OddMilnorBasis, format_odd, parse_odd
from algebra.milnor.products import COUNTERS, ProductBatch, multiply_odd, run_batch
from algebra.milnor.profile import FULL
from algebra.module.interface import act
from algebra.module.loader import load_module
from algebra.module.spec import ModuleError, bundled_dir
from charts.text import text_chart
from nassau.api.chart_data import build_chart
from nassau.engine.cofiber import CofiberSpec
from nassau.engine.region import Region
from nassau.engine.resolve import choose_algorithm, resolve
from nassau.products.filtration_one import filtration_one_text, h_matrix
from tests.helpers import assert_one_line_error, golden, run_cli
from tests.oracles.milnor_odd_naive import multiply_naive_odd

ODD = sorted(p.stem for p in bundled_dir().glob("*.json") if json.loads(p.read_text())["p"] != 2)


@pytest.fixture(scope="module", params=[3, 5, 7])
def basis(request: pytest.FixtureRequest) -> OddMilnorBasis:
    b = OddMilnorBasis(request.param, FULL)
    b.extend(200)
    return b


def poincare(p: int, top: int) -> list[int]:
    """Milnor's series prod_k (1 + t^(2p^k - 1)) / prod_i (1 - t^(2(p^i - 1)))."""
    series = [1] + [0] * top
    k = 0
    while 2 * p**k - 1 <= top:
        e = 2 * p**k - 1
        series = [series[d] + (series[d - e] if d >= e else 0) for d in range(top + 1)]
        k += 1
    i = 1
    while 2 * (p**i - 1) <= top:
        e = 2 * (p**i - 1)
        for d in range(e, top + 1):
            series[d] += series[d - e]
        i += 1
    return series


def test_dimensions(basis: OddMilnorBasis) -> None:
    assert [basis.dimension(d) for d in range(201)] == poincare(basis.prime, 200)


def test_basis_order_examples() -> None:
    """REFERENCE-ODD-PRIMES 1.3 (a wire format)."""
    b3, b5 = OddMilnorBasis(3, FULL), OddMilnorBasis(5, FULL)
    names = {d: [format_odd(b3.element(d, i)) for i in range(b3.dimension(d))] for d in (5, 17, 22, 52)}
    assert names == {5: ["Q_0 P(1)", "Q_1"], 17: ["Q_0 P(4)", "Q_0 P(0, 1)", "Q_1 P(3)", "Q_2"],
                     22: ["Q_0 Q_1 P(4)", "Q_0 Q_1 P(0, 1)", "Q_0 Q_2 P(1)", "Q_1 Q_2"],
                     52: ["P(13)", "P(9, 1)", "P(5, 2)", "P(1, 3)", "P(0, 0, 1)"]}
    assert [format_odd(b3.element(54, i)) for i in (0, 6, 10)] == ["Q_0 Q_1 P(12)", "Q_0 Q_2 P(1, 2)", "Q_0 Q_3"]
    assert [format_odd(b5.element(49, i)) for i in range(4)] == ["Q_0 P(6)", "Q_0 P(0, 1)", "Q_1 P(5)", "Q_2"]
    for d in range(60):
        assert all(b3.index(b3.element(d, i)) == i for i in range(b3.dimension(d)))


def _product(b: OddMilnorBasis, x: str, y: str) -> dict[str, int]:
    a, c = parse_odd(x), parse_odd(y)
    v = multiply_odd(b, a, c)
    d = b.degree(a) + b.degree(c)
    return {format_odd(b.element(d, i)): int(k) for i, k in enumerate(v) if k}


def test_reference_product_vectors() -> None:
    b3, b5 = OddMilnorBasis(3, FULL), OddMilnorBasis(5, FULL)
    for b in (b3, b5):
        p = b.prime
        assert _product(b, "P1", "b") == {"Q_0 P(1)": 1, "Q_1": 1}
        assert _product(b, "b", "P1") == {"Q_0 P(1)": 1}
        assert _product(b, "Q_1", "b") == {"Q_0 Q_1": p - 1}
        assert _product(b, "b", "b") == {}
    assert _product(b3, "P1", "P1") == {"P(2)": 2} and _product(b3, "P1", "P2") == {}
    assert _product(b3, "P3", "P1") == {"P(4)": 1, "P(0, 1)": 1} and _product(b3, "P1", "P3") == {"P(4)": 1}
    assert _product(b3, "P3", "Q_1") == {"Q_1 P(3)": 1, "Q_2": 1}
    assert _product(b3, "P(0, 1)", "b") == {"Q_0 P(0, 1)": 1, "Q_2": 1}
    assert _product(b3, "Q_1 P(3)", "b") == {"Q_0 Q_1 P(3)": 2}
    assert _product(b3, "Q_0 P(1)", "Q_0 P(1)") == {"Q_0 Q_1 P(1)": 1}
    assert _product(b3, "P(3, 4)", "P(1, 4)") == {"P(4, 8)": 1, "P(3, 5, 1)": 2}
    assert _product(b5, "P1", "P1") == {"P(2)": 2} and _product(b5, "P5", "P1") == {"P(6)": 1, "P(0, 1)": 1}


def _random_element(b: OddMilnorBasis, rng: np.random.Generator, top: int) -> tuple:
    while True:
        d = int(rng.integers(0, top))
        if b.dimension(d):
            return b.element(d, int(rng.integers(b.dimension(d))))


def _as_dict(b: OddMilnorBasis, vec: np.ndarray, d: int) -> dict:
    return {b.element(d, i): int(k) for i, k in enumerate(vec) if k}


def test_compiled_product_equals_milnors_formula(basis: OddMilnorBasis, rng: np.random.Generator) -> None:
    for _ in range(150):
        x, y = _random_element(basis, rng, 90), _random_element(basis, rng, 90)
        d = basis.degree(x) + basis.degree(y)
        assert _as_dict(basis, multiply_odd(basis, x, y), d) == multiply_naive_odd(basis.prime, x, y), (x, y)


def _times(b: OddMilnorBasis, vec: dict, y: tuple) -> dict:
    out: dict = {}
    for x, c in vec.items():
        d = b.degree(x) + b.degree(y)
        for z, k in _as_dict(b, multiply_odd(b, x, y), d).items():
            out[z] = (out.get(z, 0) + c * k) % b.prime
    return {z: k for z, k in out.items() if k}


def test_associative_with_units(basis: OddMilnorBasis, rng: np.random.Generator) -> None:
    one = (0, ())
    for _ in range(60):
        x, y, z = (_random_element(basis, rng, 60) for _ in range(3))
        xy = _as_dict(basis, multiply_odd(basis, x, y), basis.degree(x) + basis.degree(y))
        yz = _as_dict(basis, multiply_odd(basis, y, z), basis.degree(y) + basis.degree(z))
        left = _times(basis, xy, z)
        right: dict = {}
        for w, c in yz.items():
            for v, k in _as_dict(basis, multiply_odd(basis, x, w), basis.degree(x) + basis.degree(w)).items():
                right[v] = (right.get(v, 0) + c * k) % basis.prime
        assert left == {v: k for v, k in right.items() if k}, (x, y, z)
        assert _as_dict(basis, multiply_odd(basis, one, x), basis.degree(x)) == {x: 1}
        assert _as_dict(basis, multiply_odd(basis, x, one), basis.degree(x)) == {x: 1}


def test_adem_relations(basis: OddMilnorBasis) -> None:
    """P^a P^b = sum_j (-1)^(a+j) C((p-1)(b-j) - 1, a - pj) P^(a+b-j) P^j for a < pb, and beta^2 = 0."""
    p = basis.prime
    checked = 0
    for b_ in range(1, 6):
        for a in range(1, p * b_):
            if (a + b_) * 2 * (p - 1) > 200:
                continue
            lhs = _as_dict(basis, multiply_odd(basis, (0, (a,)), (0, (b_,))), (a + b_) * 2 * (p - 1))
            rhs: dict = {}
            for j in range(0, a // p + 1):
                c = (-1) ** (a + j) * comb((p - 1) * (b_ - j) - 1, a - p * j) % p
                if c:
                    for v, k in _times(basis, {(0, (a + b_ - j,)): c}, (0, (j,) if j else ())).items():
                        rhs[v] = (rhs.get(v, 0) + k) % p
            assert lhs == {v: k for v, k in rhs.items() if k}, (a, b_)
            checked += 1
    assert checked > 5
    assert not multiply_odd(basis, (1, ()), (1, ())).any()


def test_batch_equals_one_at_a_time(basis: OddMilnorBasis, rng: np.random.Generator) -> None:
    """Many rows times one term (with a coefficient) in one compiled call equal the products made one at a time."""
    lay = basis.layout
    rows = [_random_element(basis, rng, 40) for _ in range(30)]
    term, coef = _random_element(basis, rng, 40), int(rng.integers(1, basis.prime))
    batch = ProductBatch(row_r=np.array([lay.pack(*r) for r in rows], dtype=np.uint64),
                         row_deg=np.array([basis.degree(r) for r in rows], dtype=np.int64),
                         row_terms=np.zeros(len(rows), dtype=np.int64), term_start=np.array([0, 1]),
                         term_s=np.array([lay.pack(*term)], dtype=np.uint64),
                         term_sdeg=np.array([basis.degree(term)]), term_col=np.array([0]),
                         term_coef=np.array([coef], dtype=np.int64))
    width = max(basis.dimension(basis.degree(r) + basis.degree(term)) for r in rows)
    out = np.zeros((len(rows), width), dtype=np.uint8)
    calls = COUNTERS["batch_calls"]
    run_batch(out, batch, basis)
    assert COUNTERS["batch_calls"] == calls + 1
    for i, r in enumerate(rows):
        one = multiply_odd(basis, r, term).astype(np.int64) * coef % basis.prime
        assert np.array_equal(out[i, : len(one)], one) and not out[i, len(one):].any()


def test_odd_modules_load_and_are_modules(rng: np.random.Generator) -> None:
    assert len(ODD) == 14
    for name in ODD:
        m = load_module(name)
        alg, p = m.algebra, m.algebra.prime
        for _ in range(40):
            lo, hi = m.min_degree, m.max_degree
            x_deg = int(rng.integers(lo, hi + 1))
            da, db = int(rng.integers(1, 12)), int(rng.integers(0, 12))
            if not (m.dimension(x_deg) and alg.dimension(da) and alg.dimension(db)):
                continue
            a = alg.element(da, int(rng.integers(alg.dimension(da))))
            b = alg.element(db, int(rng.integers(alg.dimension(db))))
            x = rng.integers(0, p, m.dimension(x_deg))
            ab = multiply_odd(alg, a, b)
            lhs = np.zeros(m.dimension(x_deg + da + db), dtype=np.int64)
            for k in np.nonzero(ab)[0]:
                lhs += int(ab[k]) * act(m, alg.element(da + db, int(k)), x_deg, x)
            assert np.array_equal(lhs % p, act(m, a, x_deg + db, act(m, b, x_deg, x))), (name, a, b)


def test_extended_actions() -> None:
    """REFERENCE-ODD-PRIMES 6: X3 has P(2) x0 = 2 x8; C3v1 has Q_1 x0 = x5, Q_0 Q_1 x0 = x6, Q_1 x1 = 2 x6."""
    x3, c3v1 = load_module("X3"), load_module("C3v1")
    assert act(x3, (0, (2,)), 0, np.array([1])).tolist() == [2]
    assert act(c3v1, (2, ()), 0, np.array([1])).tolist() == [1]
    assert act(c3v1, (3, ()), 0, np.array([1])).tolist() == [1]
    assert act(c3v1, (2, ()), 1, np.array([1])).tolist() == [2]


def run(name: str, algorithm: str = "auto", **span) -> tuple:
    m = load_module(name)
    region = Region(min_degree=m.min_degree, max_s=span.pop("max_s"), **span)
    return resolve(m, region, choose_algorithm(m, algorithm), span.pop("threads", 1)), region, m


@pytest.mark.parametrize("name,module,span", [
    ("resolve-S_3", "S_3", {"max_t": 50, "max_s": 10}),
    ("resolve_through_stem-S_3", "S_3", {"max_stem": 50, "max_s": 10}),
    ("resolve-C3", "C3", {"max_t": 30, "max_s": 30}),
])
def test_golden_charts(name: str, module: str, span: dict) -> None:
    res, region, _ = run(module, **span)
    assert text_chart(build_chart(res, region, module, "standard", products=False)) == golden(name)


@pytest.mark.parametrize("name", ODD)
def test_every_odd_module_resolves_with_the_euler_check(name: str) -> None:
    res, region, m = run(name, max_stem=40, max_s=12)
    assert all(res.is_done(*b) for b in region.bidegrees())
    alg, lo = res.algebra, m.min_degree
    spec = CofiberSpec.read(m)
    for t in range(lo, lo + 13):
        lhs = sum((-1) ** s * k * alg.dimension(t - u) for (s, u), k in res.dims().items() if u <= t)
        rhs = m.dimension(t) + ((-1) ** (spec.s - 1) * m.dimension(lo + t - spec.t) if spec else 0)
        assert lhs == rhs, (name, t)


def test_theory_facts() -> None:
    """REFERENCE-ODD-PRIMES 8.2-8.4 at p = 3, and at p = 5 h_0, h_1, b_0. The product coefficients are the standard
    algorithm's Ext basis (Nassau's picks other cycles; tests/test_nassau_odd.py compares up to the change of basis)."""
    res, region, _ = run("S_3", "standard", max_stem=40, max_s=10)
    dims = {(t - s, s): k for (s, t), k in res.dims().items() if k and region.contains(s, t)}
    assert all(dims.get((0, s)) == 1 for s in range(11))  # the a_0 tower
    assert sorted(n for (n, s) in dims if s == 1) == [0, 3, 11, 35]
    assert dims[(10, 2)] == 1 and dims[(7, 2)] == 1  # b_0 (beta_1) and alpha_2
    text = filtration_one_text(res, region)
    assert "a_0 x_(11, 1, 0) = [2]" in text and "h_0 x_(7, 2, 0) = [1]" in text
    assert h_matrix(res, 1, 20, 4).tolist() == [[0, 1]]  # h_0 x_(20,4,0) = [0, 1]
    assert h_matrix(res, 1, 22, 5).tolist() == [[2]] and h_matrix(res, 0, 23, 3).tolist() == [[2]]
    assert not h_matrix(res, 1, 3, 1).any() and not h_matrix(res, 0, 7, 2).size  # a_0 h_0 = 0, a_0 alpha_2 = 0
    res5, region5, _ = run("S_5", max_stem=45, max_s=3)
    dims5 = {(t - s, s): k for (s, t), k in res5.dims().items() if k and region5.contains(s, t)}
    assert sorted(n for (n, s) in dims5 if s == 1) == [0, 7, 39] and dims5[(38, 2)] == 1


def test_cofiber_of_a0_squared_is_coker_plus_ker() -> None:
    """C9 = S_3 / a_0^2: dim = coker(a_0^2) + ker(a_0^2) one filtration down, from S_3's a_0 matrices."""
    res, region, _ = run("S_3", max_stem=22, max_s=10)
    dims = {(t - s, s): k for (s, t), k in res.dims().items() if k}
    p = 3

    def rank(m: np.ndarray) -> int:
        from fp import field
        f = field(p)
        return len(f.row_reduce(f.from_ints(m), m.shape[1])) if m.size else 0

    def a0_squared(n: int, s: int) -> np.ndarray:
        first, second = h_matrix(res, 0, n, s), h_matrix(res, 0, n, s + 1)
        return (first.astype(np.int64) @ second) % p

    c9, region9, _ = run("C9", max_stem=20, max_s=8)
    got = {(t - s, s): k for (s, t), k in c9.dims().items() if k and region9.contains(s, t)}
    expected = {}
    for n in range(21):
        for s in range(9):
            coker = dims.get((n, s), 0) - (rank(a0_squared(n, s - 2)) if s >= 2 else 0)
            ker = dims.get((n - 1, s - 1), 0) - rank(a0_squared(n - 1, s - 1)) if s >= 1 else 0
            if coker + ker:
                expected[(n, s)] = coker + ker
    assert got == expected


def test_threads_and_resume(tmp_path: Path) -> None:
    args = ("resolve", "S_3", "--stem", "60", "--max-s", "12")
    one = run_cli(*args, "--threads", "1", "--quiet")
    two = run_cli(*args, "--threads", "2", "--quiet", "--save-dir", str(tmp_path / "s"))
    assert one.returncode == 0 and one.stdout == two.stdout
    more = run_cli("resolve", "S_3", "--stem", "70", "--max-s", "12", "--save-dir", str(tmp_path / "s"))
    fresh = run_cli("resolve", "S_3", "--stem", "70", "--max-s", "12", "--quiet")
    assert more.stdout == fresh.stdout and "bidegrees loaded" in more.stderr.decode()
    assert run_cli("chart", str(tmp_path / "s")).stdout == fresh.stdout


def _module(tmp_path: Path, body: dict) -> str:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(body))
    return str(path)


@pytest.mark.parametrize("body,needle", [
    ({"p": 9, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": []}, "p = 9 is not a prime"),
    ({"p": 3, "type": "finite dimensional module", "gens": {"x0": 0, "x4": 4, "x8": 8, "x12": 12},
      "actions": ["P1 x0 = x4", "P1 x4 = x8", "P1 x8 = x12"]}, "violate the relation"),
    ({"p": 3, "type": "finite dimensional module", "gens": {"x0": 0, "x4": 4}, "actions": ["P1 x0 = 3 x4"]},
     "coefficient 3 is not in 0..2"),
    ({"p": 3, "type": "finite dimensional module", "gens": {"x0": 0, "x4": 4}, "actions": ["P2 x0 = x4"]},
     "not a generator"),
])
def test_bad_input(tmp_path: Path, body: dict, needle: str) -> None:
    out = run_cli("resolve", _module(tmp_path, body), "--stem", "10")
    assert_one_line_error(out, needle)


def test_mixed_primes_are_refused() -> None:
    for args in (("tensor", "S_3", "C2"), ("ext", "S_3", "C2", "--stem", "5"), ("resolve", "S_3^S_3", "--stem", "5")):
        out = run_cli(*args)
        assert out.returncode == 2 and len(out.stderr.decode().strip().splitlines()) == 1, out
    with pytest.raises(ModuleError, match="p = 2 only"):
        load_module("S_3^S_3")


@pytest.mark.parametrize("args", [("sq0", "S_3", "--stem", "10"),
                                  ("yoneda", "S_3", "--class", "10,2,[1]"),
                                  ("resolve", "S_3", "--stem", "10", "--products", "c0", "--svg", "/tmp/never.svg"),
                                  ("secondary", "S_3", "--stem", "10")])
def test_p2_only_commands_refuse_odd_primes(args: tuple) -> None:
    """Sq^0, Yoneda representatives, chart products by named classes and d2 are p = 2 only: one line, status 2, not
    an F2 answer (`product` and `massey` work at odd p: tests/test_products_odd.py)."""
    out = run_cli(*args)
    lines = out.stderr.decode().strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "p = 3" in lines[0], lines


@pytest.mark.parametrize("p", [3, 5, 7])
def test_q_move_signs_fixed_vectors(p: int) -> None:
    """Q(E') Q_m = (-1)^#(a in E', a > m) Q(E' + m), by hand: Q_1 Q_0 = -Q_0 Q_1; P(0, 1) Q_0 = Q_0 P(0, 1) + Q_2 and
    Q_1 Q_2 is in order (no sign, though Q_2 came from moving Q_0, which Q_1 is above); Q_2 Q_0 Q_1 is two swaps from
    Q_0 Q_1 Q_2, Q_1 Q_0 Q_2 and Q_0 Q_2 Q_1 one. -1 is p - 1: at p = 5, 7 it is not 2."""
    b = OddMilnorBasis(p, FULL)
    assert _product(b, "Q_1 P(0, 1)", "b") == {"Q_0 Q_1 P(0, 1)": p - 1, "Q_1 Q_2": 1}
    assert _product(b, "Q_2", "Q_0 Q_1") == {"Q_0 Q_1 Q_2": 1}
    assert _product(b, "Q_1", "Q_0 Q_2") == {"Q_0 Q_1 Q_2": p - 1}
    assert _product(b, "Q_0 Q_2", "Q_1") == {"Q_0 Q_1 Q_2": p - 1}
    assert _product(b, "Q_0 Q_1", "Q_2") == {"Q_0 Q_1 Q_2": 1}
