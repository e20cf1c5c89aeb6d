"""The C-motivic engine (nassau.engine.motivic, nassau.products.motivic_ext): its step against a weight-by-weight
twin, exactness of the resolution in every weight, tau inverted against the classical engine, and the classes and
relations of Dugger-Isaksen, "The motivic Adams spectral sequence" (Geom. Topol. 14, 2010) and Isaksen, "Stable
stems" (Mem. AMS 262, 2019: Table 8 lists the generators of Ext over A^C with (stem, s, weight), its Ext charts
the relations)."""
from __future__ import annotations

import numpy as np
import pytest

import nassau.engine.motivic as engine
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.motivic_weight import degree_weights, weight
from algebra.milnor.products import COUNTERS, multiply
from algebra.module.loader import load_module
from algebra.module.motivic import load_motivic
from fp import field, reduce_with_identity
from fp.packed import from_bool, to_bool
from nassau.engine.motivic import Cycles, MotivicResolution, motivic_region, reduce_weighted, resolve_motivic
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.products.motivic_ext import MotivicExt
from tests.oracles.motivic import (exactness_defects, fresh_per_weight, kernel_from_the_transpose, kernel_per_weight,
                                   rank)


def motivic_ext(name: str, stem: int, max_s: int) -> MotivicExt:
    """Ext through the stem, with one row more resolved so that the top row's tau-torsion is known."""
    module = load_motivic(name)
    region = Region(max_s=max_s + 1, min_degree=module.module.min_degree, max_stem=stem)
    return MotivicExt(resolve_motivic(module, region), max_s + 1, region.t_limit)


@pytest.fixture(scope="module")
def sphere() -> MotivicExt:
    return motivic_ext("S_2", 24, 12)


def test_weights_of_the_squares() -> None:
    """Sq^(2i) has weight i and Sq^(2i-1) weight i - 1 (the bidegrees (2i, i), (2i-1, i-1)); Q_n = P(0, ..., 0, 1)
    (r_{n+1} = 1) has weight 2^n - 1, the bidegree (2^{n+1} - 1, 2^n - 1) of tau_n."""
    for i in range(1, 40):
        assert weight((2 * i,)) == i and weight((2 * i - 1,)) == i - 1
    for n in range(8):
        assert weight((0,) * n + (1,)) == (1 << n) - 1
    algebra = MilnorBasis()
    for d in (5, 17, 33):
        assert degree_weights(algebra, d).tolist() == [weight(algebra.element(d, i))
                                                      for i in range(algebra.dimension(d))]


def test_products_need_no_negative_power_of_tau(rng: np.random.Generator) -> None:
    """P(R) P(S) = sum tau^{w(R) + w(S) - w(T)} P(T): the power is never negative (so A^C is closed under the
    classical product with these weights)."""
    algebra = MilnorBasis()
    algebra.extend(60)
    for _ in range(300):
        a, b = (int(x) for x in rng.integers(1, 30, size=2))
        r = algebra.element(a, int(rng.integers(algebra.dimension(a))))
        s = algebra.element(b, int(rng.integers(algebra.dimension(b))))
        terms = np.nonzero(multiply(algebra, r, s))[0]
        w_t = degree_weights(algebra, a + b)[terms]
        assert (weight(r) + weight(s) - w_t >= 0).all(), (r, s)


def test_step_matches_the_weight_by_weight_twin(rng: np.random.Generator) -> None:
    """reduce_weighted's new generators and kernel against ranks taken weight by weight, on random inputs of the
    shape a step sees: cycles a reduced basis (an RREF kernel) with random weights, each row a random combination of
    the cycles of weight at most its own."""
    f = field(2)
    res = MotivicResolution(load_motivic("S_2"))
    for _ in range(60):
        k, q, n = (int(x) for x in rng.integers(1, 14, size=3))
        packed, weights, cycles, rows = step_input(rng, k, q, n, 5)
        vectors = to_bool(cycles.basis, k)
        fresh, out = reduce_weighted(f.gather(packed, cycles.pivots), weights, cycles, res)
        got: dict[int, int] = {}
        for w in cycles.weights[fresh]:
            got[int(w)] = got.get(int(w), 0) + 1
        assert got == fresh_per_weight(rows, weights, vectors, cycles.weights)
        both = np.concatenate([rows, vectors[fresh]])
        both_weights = np.concatenate([weights, cycles.weights[fresh]])
        relations = to_bool(out.natural(np.arange(len(out.weights)), f), len(both_weights))
        assert not (relations.astype(np.int64) @ both.astype(np.int64) % 2).any(), "a kernel vector is no relation"
        for w, dim in kernel_per_weight(both, both_weights).items():
            inside = relations[out.weights <= w]
            assert rank(inside) == len(inside) == dim
            assert not inside[:, both_weights > w].any(), "a kernel vector above its weight"
        assert (relations[:, out.pivots] == np.eye(len(out.pivots), dtype=bool)).all(), "not reduced at the pivots"


def step_input(rng: np.random.Generator, k: int, q: int, n: int, nweights: int
               ) -> tuple[np.ndarray, np.ndarray, Cycles, np.ndarray]:
    """A random input of the shape a step sees: cycles a reduced basis (an RREF kernel of a k x q matrix) with
    random weights, and n rows, each a random combination of the cycles of weight at most its own (bool rows too)."""
    f = field(2)
    _, kernel = reduce_with_identity(from_bool(rng.random((k, q)) < 0.3), q, f)
    cycles = Cycles(kernel.basis, rng.integers(0, nweights, size=kernel.dim), kernel.pivots, np.arange(k))
    weights = rng.integers(0, nweights + 1, size=n)
    vectors = to_bool(kernel.basis, k)
    mix = (rng.random((n, kernel.dim)) < 0.5) & (cycles.weights[None, :] <= weights[:, None])
    rows = (mix.astype(np.int64) @ vectors.astype(np.int64) % 2).astype(bool)
    return from_bool(rows), weights, cycles, rows


def test_factored_kernel_matches_the_transposes_elimination(rng: np.random.Generator) -> None:
    """reduce_weighted's kernel (the rows independent of later ones weight by weight, each vector solved block by
    block) against the twin, one elimination of C'^T with the rows by decreasing weight: the same pivots, weights
    and vectors bit for bit, on fresh random inputs, a few weights over many rows as at high t among them."""
    f = field(2)
    res = MotivicResolution(load_motivic("S_2"))
    for case in range(40):
        k, q, n = ((int(x) for x in rng.integers(1, 14, size=3)) if case % 2 else
                   (int(x) for x in rng.integers(40, 200, size=3)))
        packed, weights, cycles, _ = step_input(rng, k, q, n, int(rng.integers(1, 6)))
        fresh, got = reduce_weighted(f.gather(packed, cycles.pivots), weights, cycles, res)
        want = kernel_from_the_transpose(f.gather(packed, cycles.pivots), weights, fresh)
        assert np.array_equal(got.pivots, want.pivots) and np.array_equal(got.weights, want.weights)
        every = np.arange(len(want.weights))
        assert np.array_equal(got.natural(every, f), want.natural(every, f))
        some = rng.random(len(every)) < 0.3
        assert np.array_equal(got.natural(some, f), want.natural(some, f))


def test_no_step_eliminates_its_whole_coordinate_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step finds its kernel weight by weight: no call of fp.left_kernel (one elimination of C'^T, the image's
    rank by every row: the path before FactoredCycles), and one fp.left_kernel.triangular_split per weight that has
    both rows and cycles, on those rows alone. A step that went back to the whole C'^T fails here."""
    whole, split, expected = [], [], []
    real_split, real_step = engine.triangular_split, engine.reduce_weighted

    def step(coords, weights, cycles, res):
        shared = sorted(set(weights.tolist()) & set(cycles.weights.tolist()))
        expected.extend(int((weights == w).sum()) for w in shared[::-1])
        return real_step(coords, weights, cycles, res)

    monkeypatch.setattr(engine, "left_kernel", lambda *args: whole.append(args))
    monkeypatch.setattr(engine, "triangular_split",
                        lambda a, rows, columns: split.append(len(rows)) or real_split(a, rows, columns))
    monkeypatch.setattr(engine, "reduce_weighted", step)
    resolve_motivic(load_motivic("S_2"), Region(max_s=4, min_degree=0, max_stem=8))
    assert whole == []
    assert split == expected and len(split) > 50


def test_steps_build_only_the_pivot_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above s = 0 a step builds d_s's matrix at the cycles' pivot columns alone, and that is the whole matrix's
    gather there (the twin), bit for bit, in every step; and it makes fewer products than the whole matrix, none in
    the blocks of generators where no pivot lies. A step that built the whole matrix again, or made the products
    col_map drops, fails here."""
    real, narrow, made = engine._matrix, [], {"narrow": 0, "whole": 0}

    def products() -> int:
        return COUNTERS["products"] + COUNTERS["table_pairs"]

    def matrix(res, s, t, ngens, columns=None):
        before = products()
        got = real(res, s, t, ngens, columns)
        if columns is not None:
            made["narrow"] += products() - before
            before = products()
            whole = real(res, s, t, ngens)
            made["whole"] += products() - before
            assert np.array_equal(got[0], res.field.gather(whole[0], columns)), (s, t)
            assert np.array_equal(got[1], whole[1]) and got[2] == whole[2]
            narrow.append((s, t))
        return got

    monkeypatch.setattr(engine, "_matrix", matrix)
    region = Region(max_s=5, min_degree=0, max_stem=12)
    resolve_motivic(load_motivic("S_2"), region)
    assert sorted(narrow) == sorted(b for b in motivic_region(region).bidegrees() if b[0] > 0)
    assert 0 < made["narrow"] < 0.95 * made["whole"], made


@pytest.mark.parametrize("name, stem", [("S_2", 14), ("C2", 10), ("Ceta", 10)])
def test_resolution_is_exact_in_every_weight(name: str, stem: int) -> None:
    module = load_motivic(name)
    region = Region(max_s=5, min_degree=0, max_stem=stem)
    res = resolve_motivic(module, region)
    for s, t in region.bidegrees():
        assert exactness_defects(res, s, t) == [], (s, t)


def assert_tau_inverted_is_classical(name: str, stem: int, max_s: int) -> None:
    ext = motivic_ext(name, stem, max_s)
    region = Region(max_s=max_s, min_degree=0, max_stem=stem)
    classical = resolve(load_module(name), region, "standard").dims()
    free = ext.tau_free_dims()
    assert {b: free[b] for b in classical} == classical


@pytest.mark.parametrize("name, stem, max_s", [("S_2", 30, 12), ("C2", 20, 10), ("Ceta", 20, 10)])
def test_tau_inverted_is_classical(name: str, stem: int, max_s: int) -> None:
    """Ext_{A^C}[1/tau] = Ext_A[tau, 1/tau]: the tau-free summands in (s, t), over all weights, number dim Ext_A."""
    assert_tau_inverted_is_classical(name, stem, max_s)


@pytest.mark.slow
@pytest.mark.parametrize("name, stem, max_s", [("S_2", 60, 30), ("C2", 40, 20), ("Ceta", 40, 20)])
def test_tau_inverted_is_classical_far(name: str, stem: int, max_s: int) -> None:
    assert_tau_inverted_is_classical(name, stem, max_s)


#: (stem, s, weight) of named generators, Isaksen's "Stable stems" Table 8 / Dugger-Isaksen section 5.
KNOWN = {"h0": (0, 1, 0), "h1": (1, 1, 1), "h2": (3, 1, 2), "h3": (7, 1, 4), "c0": (8, 3, 5), "Ph1": (9, 5, 5),
         "d0": (14, 4, 8), "h4": (15, 1, 8), "e0": (17, 4, 10), "c1": (19, 3, 11), "tau g": (20, 4, 11),
         "h2 g": (23, 5, 14)}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_generators(sphere: MotivicExt, name: str) -> None:
    (c,) = sphere.find(*KNOWN[name])
    assert c.torsion is None


def test_g_itself_is_no_class(sphere: MotivicExt) -> None:
    """g is not a class over A^C, while tau g and h2 g are (Isaksen, "Stable stems": its table of generators lists
    tau g and h2 g, and no g)."""
    assert sphere.find(20, 4, 12) == []
    ((h2_tau_g, power),) = sphere.h_product(2, one(sphere, *KNOWN["tau g"]))
    assert (h2_tau_g.stem, h2_tau_g.s, h2_tau_g.weight, power) == (23, 5, 14, 1)


def one(ext: MotivicExt, stem: int, s: int, w: int):
    (c,) = ext.find(stem, s, w)
    return c


def test_h1_tower_and_tau_h1_to_the_four(sphere: MotivicExt) -> None:
    """h1^k is nonzero for every k (no tau-free relation kills it), while tau h1^4 = 0 (Dugger-Isaksen 5.1): h1^k
    for k >= 4 is a generator of order tau^1."""
    x = one(sphere, 0, 0, 0)
    for k in range(1, 12):
        ((x, power),) = sphere.h_product(1, x)
        assert (x.stem, x.s, x.weight, power) == (k, k, k, 0)
        assert x.torsion == (None if k < 4 else 1)


def test_relations_h0_h1_and_h0_squared_h2(sphere: MotivicExt) -> None:
    """h0 h1 = 0; h0^2 h2 = tau h1^3 (Dugger-Isaksen; the classical h0^2 h2 = h1^3 with its weight)."""
    h0, h1, h2 = (one(sphere, *KNOWN[n]) for n in ("h0", "h1", "h2"))
    assert sphere.h_product(0, h1) == [] and sphere.h_product(1, h0) == []
    ((h0h2, p),) = sphere.h_product(0, h2)
    assert p == 0
    ((top, p),) = sphere.h_product(0, h0h2)
    assert (top.stem, top.s, top.weight, p) == (3, 3, 3, 1)
    ((h1_3, p),) = sphere.h_product(1, one(sphere, 2, 2, 2))
    assert top == h1_3 and p == 0


def test_top_stem_needs_the_column_below() -> None:
    """A generator at the top stem of a stem-shaped region: (20, 7, 13) covers tau y - x for a generator y of F_6 in
    the same degree, at stem 21, which the run must resolve too (motivic_region)."""
    assert len(motivic_ext("S_2", 20, 7).find(20, 7, 13)) == 1


def test_ctau_has_a_class_per_generator() -> None:
    """Ext_{A^C}(M_2, M_2/tau) = Hom(F_s, F_2): one class per generator of the minimal resolution (its differential
    is tau times something), tau acting as zero; h1^4, zero there once tau is, is a class again."""
    ctau, sphere = motivic_ext("Ctau", 12, 6), motivic_ext("S_2", 12, 6)
    cells = sum(len(sphere.degree(t).cells) for t in range(sphere.max_t + 1))
    assert len([c for c in ctau.classes]) == cells
    assert all(c.torsion == 1 for c in ctau.classes)
    x = one(ctau, 0, 0, 0)
    for k in range(1, 6):
        ((x, power),) = ctau.h_product(1, x)
        assert (x.stem, x.s, x.weight, power) == (k, k, k, 0)
