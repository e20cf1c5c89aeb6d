"""Nassau's algorithm at odd primes: the sub-Hopf algebras and their signatures, the vanishing line, and the charts
against the standard algorithm on every bundled odd-prime module (docs/nassau-odd.md)."""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.odd_subalgebra import OddSubalgebra, candidates, optimal_odd_subalgebra
from algebra.milnor.products import multiply_odd
from algebra.milnor.profile import FULL, Profile
from algebra.module.loader import load_module
from algebra.module.spec import bundled_dir
from charts.text import text_chart
from nassau.api.chart_data import build_chart
from nassau.engine import nassau_step
from nassau.engine import resolve as engine_resolve
from nassau.engine.nassau_step import nassau_qualifies
from nassau.engine.region import Region
from nassau.engine.resolve import choose_algorithm, resolve
from nassau.products.filtration_one import h_matrix
from tests.helpers import differentials, dims_in, golden, run_engine

ODD = sorted(p.stem for p in bundled_dir().glob("*.json") if json.loads(p.read_text())["p"] != 2)
#: The bundled odd-prime modules Nassau's algorithm takes (the cofibers C9 and C3v1b1 get the reason instead).
NASSAU_ODD = [m for m in ODD if not nassau_qualifies(load_module(m))]


def hopf_ideal(b: OddSubalgebra) -> bool:
    """Whether (tau_k, k not in K; xi_i^{p^h_i}) is a Hopf ideal of A_*: the coproducts of its generators fall in
    I (x) A + A (x) I (Delta tau_k = tau_k (x) 1 + sum_i xi_{k-i}^{p^i} (x) tau_i, Delta xi_k = sum_i xi_{k-i}^{p^i} (x)
    xi_i)."""
    def h(i: int) -> int:
        return b.p_part[i - 1] if 0 < i <= len(b.p_part) else 0

    top = len(b.p_part) + b.q_set.bit_length() + 2
    for k in range(top):
        if not b.q_set >> k & 1:
            if any(b.q_set >> i & 1 and h(k - i) > i for i in range(k)):
                return False
        if k >= 1 and any(h(k - i) > i + h(k) and h(i) > h(k) for i in range(1, k)):
            return False
    return True


@pytest.mark.parametrize("p", [3, 5, 7])
def test_candidates_are_increasing_sub_hopf_algebras(p: int) -> None:
    seq = candidates(p, FULL)
    assert [b.describe() for b in seq[:5]] == [f"F{p}", "E(Q_0)", "E(Q_0,1)", "E(Q_0,1) P[1]", "E(Q_0,1,2) P[1]"]
    assert all(hopf_ideal(b) for b in seq)
    for small, big in zip(seq, seq[1:]):
        assert small.q_set & ~big.q_set == 0 and all(x <= y for x, y in zip(small.p_part, big.p_part))
        assert small.top_degree < big.top_degree and small.slope <= big.slope
    # A module over the algebra without Q_0 (C3's): every candidate lies in it.
    no_q0 = candidates(p, Profile(q_part=-2 & 0xFFFFFFFF))
    assert all(not b.q_set & 1 and hopf_ideal(b) for b in no_q0) and no_q0[1].describe() == "E(Q_1)"


def test_a_bad_profile_is_not_a_hopf_ideal() -> None:
    """The check above can fail: E(Q_0) P[1] lacks Q_1 = [P^1, beta]."""
    assert not hopf_ideal(OddSubalgebra(3, 1, (1,)))


def _products_lie_in(b: OddSubalgebra, basis: OddMilnorBasis, top: int) -> None:
    elems = [basis.element(d, i) for d in range(top + 1) for i in range(basis.dimension(d))]
    inside = [x for x in elems if b.signature_classes(np.array([basis.layout.pack(*x)]))[0] == basis.layout.pack(*x)]
    for x in inside:
        for y in inside:
            d = basis.degree(x) + basis.degree(y)
            for j in np.nonzero(multiply_odd(basis, x, y))[0]:
                z = basis.element(d, int(j))
                word = basis.layout.pack(*z)
                assert b.signature_classes(np.array([word]))[0] == word, (x, y, z)


def test_candidates_are_closed_under_products() -> None:
    basis = OddMilnorBasis(3, FULL)
    basis.extend(60)
    for b in candidates(3, FULL)[1:5]:
        _products_lie_in(b, basis, 30)


@pytest.mark.parametrize("p,q_set,p_part,top", [(3, 0b11, (1,), 24), (3, 0b111, (2, 1), 26), (5, 0b11, (1,), 40)])
def test_products_never_lower_the_signature(p: int, q_set: int, p_part: tuple, top: int) -> None:
    """x * y has no term of a signature earlier than x's in the order signatures() enumerates: the signature classes
    filter a free module by subcomplexes, which the corrections (lower signatures first) rely on."""
    b = OddSubalgebra(p, q_set, p_part)
    basis = OddMilnorBasis(p, FULL)
    basis.extend(2 * top)
    rank = {b.signature_word(s): k + 1 for k, s in enumerate(b.signatures(10**6))}
    rank[0] = 0
    elems = [basis.element(d, i) for d in range(top + 1) for i in range(basis.dimension(d))]
    sig = {x: int(b.signature_classes(np.array([basis.layout.pack(*x)]))[0]) for x in elems}
    lowered = 0
    for x in elems:
        for y in elems:
            if basis.degree(x) + basis.degree(y) > top:
                continue
            d = basis.degree(x) + basis.degree(y)
            terms = [basis.element(d, int(j)) for j in np.nonzero(multiply_odd(basis, x, y))[0]]
            words = b.signature_classes(np.array([basis.layout.pack(*z) for z in terms], dtype=np.uint64))
            assert all(rank[int(w)] >= rank[sig[x]] for w in words), (x, y)
            lowered += any(rank[int(w)] > rank[sig[x]] for w in words)
    assert lowered  # the order matters: products do raise signatures


def test_signature_classes_by_hand() -> None:
    b = OddSubalgebra(3, 0b011, (2, 1))
    lay = OddMilnorBasis(3, FULL).layout
    for e in range(8):
        for r in [(), (1,), (9, 2), (10, 4, 1), (17, 3, 5)]:
            want = (e & 0b011, tuple(x % 3 ** h for x, h in zip(r, (2, 1))))
            rr = list(want[1])
            while rr and rr[-1] == 0:
                rr.pop()
            assert int(b.signature_classes(np.array([lay.pack(e, r)]))[0]) == lay.pack(want[0], tuple(rr))
    assert list(OddSubalgebra(3, 0b11, (1,)).signatures(14)) == [
        (1, ()), (0, (1,)), (1, (1,)), (0, (2,)), (1, (2,)), (2, ()), (3, ()), (2, (1,)), (3, (1,)), (2, (2,)),
        (3, (2,))]


def _over(tmp_path: Path, b: OddSubalgebra) -> str:
    path = tmp_path / f"B{b.p}_{b.q_set}.json"
    path.write_text(json.dumps({"p": b.p, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": [],
                                "profile": {"truncated": True, "p_part": list(b.p_part), "q_part": b.q_set}}))
    return str(path)


@pytest.mark.parametrize("p,count,max_t", [(3, 5, 80), (5, 4, 120)])
def test_vanishing_line_holds_on_computed_ext(tmp_path: Path, p: int, count: int, max_t: int) -> None:
    """Ext_B^{s,t}(F_p) = 0 for t > c(B) s, on Ext_B computed by the standard algorithm (the line is proved from the
    May spectral sequence; this checks the constants). The line is sharp where Ext_B has its b_10 or v_k tower."""
    for b in candidates(p, FULL)[1:count]:
        res, region = run_engine(_over(tmp_path, b), max_t=max_t, max_s=max_t // max(b.slope, 1) + 2)
        nonzero = [(s, t) for (s, t), k in dims_in(res, region).items() if k]
        assert all(t <= b.slope * s for s, t in nonzero), b.describe()
        assert any(t == b.slope * s and s > 0 for s, t in nonzero), b.describe()


def test_optimal_choice_walks_the_lines() -> None:
    assert optimal_odd_subalgebra(3, FULL, 4, 4 + 1).describe() == "F3"
    assert optimal_odd_subalgebra(3, FULL, 4, 4 + 2).describe() == "E(Q_0)"
    a1 = candidates(3, FULL)[3]
    assert optimal_odd_subalgebra(3, FULL, 4, a1.slope * 4 + a1.top_degree).describe() != a1.describe()
    assert optimal_odd_subalgebra(3, FULL, 4, a1.slope * 4 + a1.top_degree + 1).describe() == a1.describe()


def test_which_modules_qualify() -> None:
    assert choose_algorithm(load_module("S_3"), "auto") == "nassau"
    assert choose_algorithm(load_module("C3"), "auto") == "nassau"
    assert "cofiber" in nassau_qualifies(load_module("C9"))
    assert {"S_3", "S_5", "S_7", "C3", "X3", "Calpha"} <= set(NASSAU_ODD)


@pytest.mark.parametrize("module", NASSAU_ODD)
def test_nassau_equals_standard(module: str) -> None:
    a, region = run_engine(module, stem=60, max_s=16, algorithm="standard")
    b, _ = run_engine(module, stem=60, max_s=16, algorithm="nassau")
    assert dims_in(a, region) == dims_in(b, region)


@pytest.mark.slow
@pytest.mark.parametrize("module", NASSAU_ODD)
def test_nassau_equals_standard_through_stem_150(module: str) -> None:
    a, region = run_engine(module, stem=150, max_s=40, algorithm="standard")
    b, _ = run_engine(module, stem=150, max_s=40, algorithm="nassau")
    assert dims_in(a, region) == dims_in(b, region)


@pytest.mark.parametrize("name,module,span", [
    ("resolve-S_3", "S_3", {"max_t": 50, "max_s": 10}),
    ("resolve_through_stem-S_3", "S_3", {"stem": 50, "max_s": 10}),
    ("resolve-C3", "C3", {"max_t": 30, "max_s": 30}),
])
def test_reference_charts(name: str, module: str, span: dict) -> None:
    res, region = run_engine(module, algorithm="nassau", **span)
    assert text_chart(build_chart(res, region, module, "nassau", products=False)) == golden(name)


def test_the_nassau_path_runs_and_its_resolution_is_minimal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Signature blocks at s >= 2 over nontrivial B (corrections made), d d = 0, and no generator hit by a unit."""
    used, blocks = set(), []
    choose, inverse = nassau_step.subalgebra_for, nassau_step.block_inverse

    def spy_choose(module, s, t):
        b = choose(module, s, t)
        used.add(b.describe())
        return b

    def spy_inverse(f, image, cols):
        blocks.append(len(cols))
        return inverse(f, image, cols)

    monkeypatch.setattr(nassau_step, "subalgebra_for", spy_choose)
    monkeypatch.setattr(nassau_step, "block_inverse", spy_inverse)
    res, region = run_engine("S_3", stem=70, max_s=14, algorithm="nassau")
    assert {"E(Q_0)", "E(Q_0,1)", "E(Q_0,1) P[1]"} <= used and len(blocks) > 100
    f = res.field
    for s in range(2, 15):
        fs = res.free(s)
        for g in range(fs.num_gens):
            t = int(fs.gen_degrees[g])
            vec, ngens = res.differential(s).output(g)
            assert ngens <= res.free(s - 1).gens_below(t)  # d(g) reaches only generators below t: minimal
            assert f.to_ints(vec.reshape(1, -1), vec.size).any()
            dd = res.differential(s - 1).apply(t, vec.reshape(1, -1), res.free(s - 2).gens_below(t))
            assert not dd.any(), (s, t, g)


def test_resume_from_a_save_directory(tmp_path: Path) -> None:
    from tests.helpers import run_cli

    args = ("resolve", "S_3", "--stem", "50", "--max-s", "12", "--algorithm", "nassau", "--quiet")
    first = run_cli(*args[:3], "40", *args[4:], "--save-dir", str(tmp_path / "s"))
    more = run_cli(*args, "--save-dir", str(tmp_path / "s"))
    fresh = run_cli("resolve", "S_3", "--stem", "50", "--max-s", "12", "--algorithm", "standard", "--quiet")
    assert first.returncode == 0 and more.stdout == fresh.stdout


def test_a_region_under_threads_is_the_same(tmp_path: Path) -> None:
    m = load_module("S_5")
    region = Region(min_degree=0, max_s=10, max_stem=160)
    one = resolve(m, region, "nassau", 1)
    two = resolve(m, region, "nassau", 2)
    assert dims_in(one, region) == dims_in(two, region)


def _rank(p: int, m: np.ndarray) -> int:
    from fp import field

    f = field(p)
    return len(f.row_reduce(f.from_ints(m), m.shape[1])) if m.size else 0


@pytest.mark.parametrize("module,stem", [("S_3", 60), ("C3v1", 40), ("S_5", 90)])
def test_a0_and_h0_agree_up_to_the_change_of_basis(module: str, stem: int) -> None:
    """The products by a_0 and h_0 on Nassau's Ext basis are the standard basis's conjugated by the change of basis
    in each bidegree: so every matrix and every product of two has the same rank on both."""
    res = {a: run_engine(module, stem=stem, max_s=12, algorithm=a)[0] for a in ("standard", "nassau")}
    p = res["nassau"].field.p
    q1 = 2 * (p - 1) - 1
    checked = 0
    for n in range(stem - 2 * q1 - 1):
        for s in range(10):
            for i, j in [(0, 0), (0, 1), (1, 0), (1, 1)]:
                ranks = set()
                for r in res.values():
                    first = h_matrix(r, i, n, s)
                    second = h_matrix(r, j, n + (q1 if i else 0), s + 1)
                    ranks.add((_rank(p, first), _rank(p, (first.astype(np.int64) @ second) % p)))
                assert len(ranks) == 1, (module, n, s, i, j, ranks)
                checked += max(ranks)[0] > 0
    assert checked >= 10


@pytest.mark.parametrize("p", [3, 5, 7])
def test_correct_over_fp_is_apply_and_a_product(p: int) -> None:
    """QuasiInverse.correct over F_p on fresh random blocks: the part of rem on the block's columns is cancelled, and
    y d = what was taken from rem, as the quasi-inverse's apply and one product give it."""
    from fp import field, quasi_inverse_with_identity

    rng = np.random.default_rng(p)
    f = field(p)
    for _ in range(20):
        n, width = int(rng.integers(1, 12)), int(rng.integers(1, 30))
        image = rng.integers(0, p, (n, width)).astype(np.uint8)
        cols = np.sort(rng.choice(width, int(rng.integers(1, width + 1)), replace=False))
        rows = np.sort(rng.choice(40, n, replace=False))
        qi = quasi_inverse_with_identity(f.gather(image, cols), len(cols), f)
        rem = ((rng.integers(0, p, (4, n)) @ image.astype(np.int64)) % p).astype(np.uint8)
        before, y = rem.copy(), np.zeros((4, 40), dtype=np.uint8)
        qi.correct(rem, cols, rows, image, y)
        assert not rem[:, cols].any()
        x = qi.apply(f.gather(before, cols))
        assert np.array_equal(y[:, rows], x) and not np.delete(y, rows, axis=1).any()
        assert np.array_equal((before.astype(np.int64) - x.astype(np.int64) @ image) % p, rem)


@pytest.mark.parametrize("module", ["S_3", "X3"])
def test_nassau_preimages_at_odd_primes(module: str) -> None:
    """Preimages by signature under d_s (what lifting uses) on fresh random cycles: d x = r, as the standard method's
    preimages satisfy it."""
    from nassau.engine.preimages import Preimages

    rng = np.random.default_rng(7)
    res, _ = run_engine(module, stem=50, max_s=10, algorithm="nassau")
    f = res.field
    by_sig, std = Preimages(res, "nassau"), Preimages(res, "standard")
    checked = 0
    for s, t in sorted(b for b in res.dims() if 1 <= b[0] < 10):
        src, tgt = by_sig.source_ngens(s, t), by_sig.target_ngens(s, t)
        dim = res.free(s).dimension(t, src)
        if not dim:
            continue
        d = res.differential(s)
        cycles = d.apply(t, rng.integers(0, f.p, (3, dim)).astype(np.uint8), tgt)
        for pre in (by_sig, std):
            x = pre(s, t, cycles)
            assert np.array_equal(d.apply(t, x, tgt), cycles), (s, t)
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("module", ["S_3", "Calpha", "C3"])
def test_signature_filter_keeps_exactly_the_block(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signature block built with the kernel's filter (products of other signatures dropped before their
    coefficient and index) equals the one built without it, every product made and the other columns dropped
    (product tables off: a product read from a table meets no filter)."""
    monkeypatch.setenv("NASSAU_PRODUCT_TABLES_MB", "0")
    res, _ = run_engine(module, stem=60, max_s=12, algorithm="nassau")
    checked = 0
    for s, t in [(3, 50), (5, 60), (8, 66), (10, 70)]:
        sub = nassau_step.subalgebra_for(res.module, s, t)
        d, fs, low = res.differential(s), res.free(s), res.free(s - 1)
        ngens = low.gens_below(t)
        sig_src = sub.signature_classes(fs.basis_words(t, fs.gens_below(t))[1])
        sig_tgt = sub.signature_classes(low.basis_words(t, ngens)[1])
        for sig in (None, *list(sub.signatures(t))[:6]):
            word = np.uint64(0 if sig is None else sub.signature_word(sig))
            rows, cols = np.nonzero(sig_src == word)[0], np.nonzero(sig_tgt == word)[0]
            col_map = np.full(low.dimension(t, ngens), -1, dtype=np.int64)
            col_map[cols] = np.arange(len(cols))
            plain = d.matrix(t, rows, ngens, col_map=col_map, ncols=len(cols))
            kept = nassau_step.signature_block(d, t, sub, sig, rows, ngens, cols)
            assert np.array_equal(plain, kept), (s, t, sig)
            checked += plain.any()
    assert checked >= 4


@pytest.mark.parametrize("p", [3, 5, 7, 251])
def test_small_quasi_inverse_is_the_augmented_ones(p: int) -> None:
    """The compiled small quasi-inverse over F_p gives the Augmented path's pivots and preimage rows, bit for bit, on
    fresh random matrices (full rank, rank deficient, empty)."""
    from fp import field, reduced_with_identity
    from fp.modp import small_quasi_inverse_modp

    rng = np.random.default_rng(p)
    f = field(p)
    for _ in range(40):
        rows, ncols = int(rng.integers(0, 40)), int(rng.integers(0, 40))
        a = rng.integers(0, p, (rows, ncols)).astype(np.uint8)
        if rows > 2 and rng.random() < 0.5:
            a[-1] = (a[0].astype(np.int64) * 2 + a[1]) % p
        aug, pivots = reduced_with_identity(a, ncols, f)
        want = aug.quasi_inverse(pivots, 0, 1)
        got = small_quasi_inverse_modp(a, ncols, p)
        assert np.array_equal(got[0], want.pivots) and np.array_equal(got[1], want.preimage)
    assert small_quasi_inverse_modp(np.zeros((48, 3), dtype=np.uint8), 3, 3) is None


@pytest.mark.parametrize("module,algorithm", [("S_3", "standard"), ("S_3", "nassau"), ("S_5", "nassau"),
                                              ("C3", "nassau")])
def test_lifted_products_by_a0_and_h0_are_the_filtration_one_products(module: str, algorithm: str) -> None:
    """Chain maps lifted through the preimages of the run's own method (Nassau's: signature by signature) at odd p:
    the products by a_0 and h_0 they read equal the filtration-one products read off d, on the run's own Ext basis
    (as at p = 2, tests/test_chain_map.py), up to the sign of graded commutativity: the lift reads b x, d reads
    x b, and x b = (-1)^{s_x s_b + t_x t_b} b x (t_b = 1 for a_0, q for h_0: the sign follows n_x for a_0 and s_x
    for h_0, which the readouts show)."""
    from nassau.engine.preimages import Preimages
    from nassau.lifting.chain_map import ChainMap, lift
    from nassau.products.filtration_one import op_degree, operations, product_matrices

    res, region = run_engine(module, stem=40, max_s=10, algorithm=algorithm)
    res.preimages = Preimages(res, algorithm)
    ops = operations(res, region)
    maps = {i: ChainMap.from_class(res, res, op_degree(res, i) - 1, 1, np.array([1], dtype=np.uint8), region)
            for i in ops}
    lift(list(maps.values()))
    checked = 0
    for pm in product_matrices(res, region):
        n, s = pm.source
        t_b = op_degree(res, pm.i)
        sign = -1 if (s + (n + s) * t_b) % 2 else 1
        want = (sign * pm.matrix.astype(np.int64)) % res.field.p
        assert np.array_equal(maps[pm.i].hom_k(s + 1, n + s + t_b), want), (pm.i, pm.source)
        checked += pm.matrix.any()
    assert checked > 10


def test_nassau_and_standard_preimages_lift_to_the_same_maps() -> None:
    """On one Nassau resolution at p = 3, a class lifted through Nassau's preimages and through the standard ones:
    the same readouts everywhere (they do not depend on the preimages chosen)."""
    from nassau.engine.preimages import Preimages
    from nassau.lifting.chain_map import ChainMap, lift

    res, region = run_engine("S_3", stem=40, max_s=10, algorithm="nassau")
    got = {}
    for method in ("nassau", "standard"):
        res.preimages = Preimages(res, method)
        got[method] = ChainMap.from_class(res, res, 10, 2, np.array([1], dtype=np.uint8), region)  # b_0
        lift([got[method]])
    f, checked = got["nassau"], 0
    for (s, t), k in sorted(res.dims().items()):
        if k and region.contains(s, t) and s >= 2 and f.is_lifted(s, t):
            assert np.array_equal(f.hom_k(s, t), got["standard"].hom_k(s, t)), (s, t)
            checked += f.hom_k(s, t).any()
    assert checked >= 5


def _map_ranks(algorithm: str, *args: str) -> dict[tuple[int, int], int]:
    """`nassau map ARGS` by the given algorithm: the rank of f^* at each bidegree of the target's Ext."""
    import re
    from collections import defaultdict

    from tests.helpers import run_cli

    out = run_cli("map", *args, "--algorithm", algorithm, "--quiet")
    assert out.returncode == 0, out.stderr
    rows = defaultdict(list)
    for line in out.stdout.decode().splitlines():
        m = re.match(r"\S+ x_\((\d+), (\d+), \d+\) = \[([\d, ]*)\]", line)
        rows[(int(m.group(1)), int(m.group(2)))].append([int(v) for v in m.group(3).split(",") if v.strip()])
    return {b: _rank(3, np.array(v, dtype=np.int64)) if v and v[0] else 0 for b, v in rows.items()}


@pytest.mark.parametrize("args", [("S_3", "Calpha", "--send", "x0=x4", "--degree", "4", "--name", "p"),
                                  ("Calpha", "S_3", "--send", "x0=x0", "--name", "c")])
def test_module_maps_at_p3_agree_up_to_the_change_of_basis(args: tuple) -> None:
    """`nassau map` at p = 3 on resolutions by Nassau's algorithm (lifted through its preimages) and by the standard
    one: f^* has the same rank at every bidegree (the two runs' Ext bases differ by a change of basis)."""
    span = ("--stem", "36", "--max-s", "10")
    nassau, standard = _map_ranks("nassau", *args, *span), _map_ranks("standard", *args, *span)
    assert nassau == standard and sum(nassau.values()) > 10


@pytest.mark.parametrize("module,stem,max_s,least", [("S_5", 200, 14, 20), ("S_3", 60, 14, 10), ("C3", 60, 20, 10),
                                                     ("S_2", 40, 14, 0)])
def test_step_shortcuts_are_their_twin(monkeypatch: pytest.MonkeyPatch, module: str, stem: int, max_s: int,
                                       least: int) -> None:
    """The steps that build nothing (no zero-signature row in F_{s-1}(t)) or no kernel block (no zero-signature
    column in F_{s-2}(t)) give the same generators and differentials, bit for bit, as the general path they skip
    (step_nassau(..., shortcuts=False)), and are taken at odd p (counted), so removing them fails here."""
    before = dict(nassau_step.COUNTERS)
    fast, _ = run_engine(module, stem=stem, max_s=max_s, algorithm="nassau")
    taken = {k: nassau_step.COUNTERS[k] - before[k] for k in before}
    monkeypatch.setattr(engine_resolve, "step_nassau", partial(nassau_step.step_nassau, shortcuts=False))
    plain, _ = run_engine(module, stem=stem, max_s=max_s, algorithm="nassau")
    assert nassau_step.COUNTERS == {k: before[k] + taken[k] for k in before}  # the twin takes none
    assert fast.dims() == plain.dims()
    assert differentials(fast, max_s) == differentials(plain, max_s)
    assert taken["empty"] >= least and taken["no_columns"] >= least, taken  # S_2: its steps never take them


def test_a_step_finds_its_term_tables_only_for_corrections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural: a Nassau step looks up the product tables of every term of d_{s-1} in degree t (FreeMap.term_tables)
    only when it has new generators to correct; its kernel block finds the tables of its own rows' terms. S_5 has
    few such steps, and finding every term's tables at each of its 11571 steps cost more than the tables saved (a
    revert shows as a call per step)."""
    from algebra.free.free_map import FreeMap

    calls, found = [], []
    real_term_tables, real_step = FreeMap.term_tables, engine_resolve.step_nassau
    monkeypatch.setattr(FreeMap, "term_tables", lambda self, *a: calls.append(a) or real_term_tables(self, *a))
    monkeypatch.setattr(engine_resolve, "step_nassau", lambda *a, **k: found.append(real_step(*a, **k)) or found[-1])
    run_engine("S_5", stem=200, max_s=14, algorithm="nassau")
    assert len(found) > 200 and 0 < len(calls) == sum(1 for n in found if n)
