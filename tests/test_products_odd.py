"""Products and Massey products at odd primes (docs/products.md, docs/nassau-odd.md): the products by a_0 and h_0
against the filtration-one products, the one-map route for the sphere against one map per generator (the sign of
graded commutativity), graded commutativity and associativity on random classes, the standard and Nassau resolutions
against each other through the identity's chain map, known relations in Ext_{A_3}, and <h_0, h_0, h_0> = +-b_0."""
from __future__ import annotations

import re

import numpy as np
import pytest

from nassau.engine.preimages import Preimages
from nassau.lifting.chain_homotopy import ChainHomotopy
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_algebra import ExtAlgebra, commutation_sign
from nassau.products.ext_class import ExtClass
from nassau.products.filtration_one import product_matrices
from nassau.products.massey import massey_products, times
from tests.helpers import run_cli, run_engine

A0, H0, B0 = ExtClass(0, 1, (1,)), ExtClass(3, 1, (1,)), ExtClass(10, 2, (1,))  # at p = 3
H1, H2 = ExtClass(11, 1, (1,)), ExtClass(35, 1, (1,))


@pytest.fixture(scope="module", params=["standard", "nassau"])
def s3(request):
    """S_3 through stem 40, s <= 8, by either algorithm, lifting through its own method's preimages."""
    res, region = run_engine("S_3", stem=40, max_s=8, algorithm=request.param)
    res.preimages = Preimages(res, request.param)
    return res, region, request.param


def classes(res, region, max_stem: int, max_s: int) -> list[tuple[int, int]]:
    return sorted((t - s, s) for (s, t), k in res.dims().items()
                  if k and region.contains(s, t) and t - s <= max_stem and s <= max_s)


def random_class(res, at: list[tuple[int, int]], rng) -> ExtClass:
    """A nonzero class at a random bidegree of `at`, entries 0..p-1."""
    n, s = at[rng.integers(len(at))]
    v = rng.integers(0, res.field.p, res.new_gens[(s, n + s)])
    if not v.any():
        v[rng.integers(len(v))] = 1
    return ExtClass(n, s, tuple(int(x) for x in v))


def product(alg: ExtAlgebra, x: ExtClass, b: ExtClass, route: str = "auto") -> ExtClass:
    """x b as a class (lifted: never the filtration-one shortcut)."""
    m = alg.products(b, [(x.n, x.s)], lifted=True, route=route)[(x.n, x.s)]
    return ExtClass(x.n + b.n, x.s + b.s, tuple(int(v) for v in times(x, m, alg.p)))


@pytest.mark.parametrize("module,algorithm", [("S_3", "standard"), ("S_3", "nassau"), ("C3", "nassau"),
                                              ("S_5", "nassau")])
def test_products_by_a0_and_h0_equal_the_filtration_one_products(module: str, algorithm: str) -> None:
    """x a_0 and x h_0 lifted, both routes (one map of the operation read with the commutation sign, one map per
    generator x), equal the coefficients read off d without lifting (the chart's a_0 and h_0 lines)."""
    res, region = run_engine(module, stem=36, max_s=8, algorithm=algorithm)
    res.preimages = Preimages(res, algorithm)
    alg = ExtAlgebra(res, res)
    q = 2 * (res.field.p - 1)
    ops = {0: ExtClass(0, 1, (1,)), 1: ExtClass(q - 1, 1, (1,))}
    at = classes(res, region, 36, 7)
    checked = 0
    for route in ("auto", "generators"):
        mats = {i: alg.products(b, at, lifted=True, route=route) for i, b in ops.items() if res.new_gens.get((1, b.t))}
        for pm in product_matrices(res, region):
            if pm.source in mats[pm.i]:
                assert np.array_equal(mats[pm.i][pm.source], pm.matrix), (route, pm.i, pm.source)
                checked += pm.matrix.any()
    assert checked > 6


def test_products_on_a_module_through_the_unit() -> None:
    """Calpha (p = 3) over Ext(S_3): per-generator lifts into the unit's resolution give the filtration-one products
    of Calpha's own resolution."""
    calpha, region = run_engine("Calpha", stem=30, max_s=6, algorithm="nassau")
    unit, _ = run_engine("S_3", stem=30, max_s=6, algorithm="nassau")
    alg = ExtAlgebra(calpha, unit)
    at = classes(calpha, region, 30, 5)
    checked = 0
    for i, b in enumerate((A0, H0)):
        mats = alg.products(b, at, lifted=True)
        for pm in product_matrices(calpha, region, [i]):
            if pm.source in mats:
                assert np.array_equal(mats[pm.source], pm.matrix), (i, pm.source)
                checked += pm.matrix.any()
    assert checked > 4


def test_graded_commutativity_and_associativity(s3, rng) -> None:
    """x y = (-1)^{s_x s_y + t_x t_y} y x and (x y) z = x (y z) on random classes, each product lifted from its left
    factor (one map per generator), so the sign comes from the lifts, not from commutation_sign."""
    res, region, algorithm = s3
    alg = ExtAlgebra(res, res)
    at = classes(res, region, 13, 2)
    signs = set()
    for i, first in enumerate(at):  # every pair of bidegrees, random classes there
        for second in at[i:]:
            x, y = random_class(res, [first], rng), random_class(res, [second], rng)
            xy, yx = product(alg, x, y, "generators"), product(alg, y, x, "generators")
            sign = commutation_sign(3, (x.s, x.t), (y.s, y.t))
            assert np.array_equal(xy.array, (sign * yx.array.astype(np.int64)) % 3), (x, y)
            assert np.array_equal(product(alg, x, y).array, xy.array), (x, y)  # the one-map route, sign applied
            if xy.array.any():
                signs.add(sign)
    assert signs == {1, 2}
    for _ in range(4):
        x, y, z = (random_class(res, at, rng) for _ in range(3))
        xy = product(alg, x, y, "generators")
        left = product(alg, xy, z, "generators")
        right = product(alg, x, product(alg, y, z, "generators"), "generators")
        assert np.array_equal(left.array, right.array), (x, y, z)


def test_standard_and_nassau_products_agree_up_to_the_change_of_basis(rng) -> None:
    """The identity of S_3 lifted to phi: F (standard) -> G (Nassau's) gives phi^*: Ext_G -> Ext_F, the change of
    basis between the two runs; it is a ring map: phi^*(x b) = phi^*(x) phi^*(b) on random classes, each product
    computed on its own run's resolution through its own preimages."""
    runs = {}
    for algorithm in ("standard", "nassau"):
        res, region = run_engine("S_3", stem=30, max_s=6, algorithm=algorithm)
        res.preimages = Preimages(res, algorithm)
        runs[algorithm] = res
    std, nas = runs["standard"], runs["nassau"]
    phi = ChainMap.from_module_map(std, nas, 0, lambda t: np.eye(1 if t == 0 else 0, dtype=np.uint8), region)
    lift([phi])

    def pull(c: ExtClass) -> ExtClass:
        m = phi.hom_k(c.s, c.t)
        return ExtClass(c.n, c.s, tuple(int(v) for v in (c.array.astype(np.int64) @ m.astype(np.int64)) % 3))

    at = classes(nas, region, 10, 3)
    checked = 0
    for first in at:
        for second in at:
            x, b = random_class(nas, [first], rng), random_class(nas, [second], rng)
            got = product(ExtAlgebra(std, std), pull(x), pull(b))
            assert got == pull(product(ExtAlgebra(nas, nas), x, b)), (x, b)
            checked += got.array.any()
    assert checked >= 10


def test_known_relations_in_ext_of_s3(s3) -> None:
    """Ext_{A_3}^{1,2} (Liulevicius 1962; Ravenel's Green Book 1.2, 3.2-3.4): h_0 h_1 = 0 (h_i h_{i+1} = 0),
    a_0 h_0 = 0, h_0^2 = 0 (graded commutativity: h_0 h_0 = -h_0 h_0), a_0 h_1 and h_0 h_2 nonzero (basis elements of
    Ext^2), a_0^3 != 0 (the stem-0 tower); a_0 b_0 and h_0 b_0 nonzero (the reference's S_3 chart,
    REFERENCE-ODD-PRIMES 8.4)."""
    res, region, algorithm = s3
    alg = ExtAlgebra(res, res)
    zero = lambda c: not c.array.any()  # noqa: E731
    assert zero(product(alg, H0, H1)) and zero(product(alg, H1, H0))
    assert zero(product(alg, A0, H0)) and zero(product(alg, H0, H0))
    assert not zero(product(alg, A0, H1)) and not zero(product(alg, H1, A0))
    assert not zero(product(alg, product(alg, A0, A0), A0))
    assert not zero(product(alg, B0, A0)) and not zero(product(alg, B0, H0))
    big, _ = run_engine("S_3", stem=38, max_s=2, algorithm=algorithm)
    big.preimages = Preimages(big, algorithm)
    assert not zero(product(ExtAlgebra(big, big), H0, H2))


def test_massey_h0_h0_h0_is_b0(s3) -> None:
    """<h_0, h_0, h_0> = +-b_0 at p = 3 with zero indeterminacy (b_0 is the p-fold Massey product of h_0: May 1966;
    Ravenel's Green Book 3.2), and <h_0, h_0, a_0> = +-alpha_2 at (7, 2)."""
    res, region, algorithm = s3
    found = {b.c: b for b in massey_products(ExtAlgebra(res, res), H0, H0, region)}
    assert found[H0].offset in {(1,), (2,)} and found[H0].indeterminacy == ()
    assert found[A0].offset in {(1,), (2,)}


def test_null_homotopy_identity_over_f3(s3) -> None:
    """d h + h d = B f on every generator of the homotopy behind <-, h_0, a_0>: the sign of the correction term over
    F_p (h(x) is a preimage of B f(x) - h(d x))."""
    res, region, algorithm = s3
    f = ChainMap.from_class(res, res, 0, 1, np.array([1], dtype=np.uint8), region)  # a_0
    b = ChainMap.from_class(res, res, 3, 1, np.array([1], dtype=np.uint8), region)  # h_0
    lift([f, b])
    h = ChainHomotopy(f, b, region)
    lift([h])
    fld, checked = res.field, 0
    for (s, t), k in sorted(res.dims().items()):
        g = s - h.s_shift
        if not k or g < 1 or not h.is_lifted(s, t):
            continue
        tt = t - h.t_shift
        width = res.free(g - 1).gens_below(tt + 1)
        first = res.free(s).gens_below(t)
        dh = res.differential(g).apply(tt, h.images(s, t), width)
        hd = h.free_map(s - 1).apply(t, res.differential(s).outputs(first, first + k), width)
        bf = b.free_map(s - 1).apply(t - 1, f.images(s, t), width)
        ncols = res.free(g - 1).dimension(tt, width)
        lhs = (fld.to_ints(dh, ncols).astype(np.int64) + fld.to_ints(hd, ncols)) % 3
        assert np.array_equal(lhs, fld.to_ints(bf, ncols)), (s, t)
        checked += bool(lhs.any())
    assert checked > 5


def test_cli_product_and_massey_at_p3() -> None:
    """`nassau product` and `nassau massey` at p = 3 print the reference's lines with entries mod 3."""
    out = run_cli("product", "S_3", "--by", "a0=0,1,[1]", "--stem", "24", "--max-s", "6", "--quiet")
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "a0 x_(11, 1, 0) = [2]\n" in text and "a0 x_(23, 4, 0) = [2, 0]\n" in text  # REFERENCE-ODD-PRIMES 8.4
    out = run_cli("massey", "S_3", "--a", "3,1,[1]", "--b", "3,1,[1]", "--stem", "12", "--max-s", "4", "--quiet")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^<a, b, x_\(3, 1, \[1\]\)> = \[[12]\] \+ \{\}$", out.stdout.decode(), re.M), out.stdout
    bad = run_cli("product", "S_3", "--by", "x=3,1,[3]", "--stem", "10", "--quiet")
    assert bad.returncode == 2 and b"not below p = 3" in bad.stderr
