"""Chain-map lifting: the reference's lift_hom outputs, the slow twin bit for bit, d f = f d, the product identities of
Ext(S) on both algorithms' resolutions, thread-count invariance, and what the batching saves."""
from __future__ import annotations

import numpy as np
import pytest

from algebra.free.free_map import FreeMap
from algebra.milnor.products import COUNTERS
from algebra.module.homomorphism import parse_module_map
from algebra.module.loader import load_module
from fp import to_bool
from nassau.engine.preimages import Preimages
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ExtClass
from nassau.products.filtration_one import product_matrices
from nassau.products.product_lines import lines, map_rows, product_rows, shifted_region
from tests.helpers import golden, run_engine
from tests.lifting_twin import naive_lift

ALGORITHMS = ["standard", "nassau"]


@pytest.fixture(scope="module", params=ALGORITHMS)
def sphere(request):
    """S_2 through stem 30, s <= 10, with Preimages of the same kind as the resolution."""
    res, region = run_engine("S_2", stem=30, max_s=10, algorithm=request.param)
    return res, region, Preimages(res, request.param)


def lifted(res, region, pre, n, s, vector, name="", threads=1) -> ChainMap:
    """The chain map of the class n,s,[vector], lifted through `pre` (which the resolution then owns)."""
    f = ChainMap.from_class(res, res, n, s, np.array(vector, dtype=np.uint8), region, name)
    res.preimages = pre
    lift([f], threads)
    return f


def times(f: ChainMap, x: ExtClass) -> np.ndarray:
    """The class f lifts from times x (x at f's target bidegree), in the basis at x + shift."""
    h = f.hom_k(x.s + f.s_shift, x.t + f.t_shift)
    return (x.array.astype(np.int64) @ h.astype(np.int64)) % 2


def random_class(res, region, rng, max_stem=None, nonzero=True) -> ExtClass:
    """A nonzero class at a random bidegree at most max_stem, below the top two rows (so its lift has rows)."""
    found = sorted((t - s, s) for (s, t), k in res.dims().items() if k and region.contains(s, t)
                   and (max_stem is None or t - s <= max_stem) and s < region.max_s - 1)
    n, s = found[rng.integers(len(found))]
    dim = res.new_gens[(s, n + s)]
    v = rng.integers(0, 2, dim)
    if nonzero and not v.any():
        v[rng.integers(dim)] = 1
    return ExtClass(n, s, tuple(int(x) for x in v))


# -- goldens --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_products_by_g_are_the_references(algorithm: str) -> None:
    res, region = run_engine("S_2", stem=25, max_s=9, algorithm=algorithm)
    res.preimages = Preimages(res, algorithm)
    alg = ExtAlgebra(res, res)
    text = "".join(line + "\n" for line in lines("g", product_rows(alg, ExtClass(20, 4, (1,)), region)))
    assert text == golden("lift_hom-g-S_2-nassau" if algorithm == "nassau" else "lift_hom-g-S_2")


@pytest.mark.parametrize("name,source,target,degree,send,stem,label", [
    ("lift_hom-Cnu-S_2", "S_2", "Cnu", 4, "x0=x4", 11, "p"),
    ("lift_hom-S_2-Cnu", "Cnu", "S_2", 0, "x0=x0", 15, "i"),
])
def test_induced_maps_are_the_references(name, source, target, degree, send, stem, label) -> None:
    m, n = load_module(source), load_module(target)
    region = Region(max_s=15, min_degree=m.min_degree, max_stem=stem)
    f_res = resolve(m, region, "nassau")
    t_region = shifted_region(region, 0, -degree, n.min_degree)
    g_res = resolve(n, t_region, "nassau")
    phi = parse_module_map(m, n, degree, [send], region.t_limit)
    phi.check_linear(region.t_limit)
    f = ChainMap.from_module_map(f_res, g_res, degree, phi.matrix, region, label)
    g_res.preimages = Preimages(g_res, "nassau")
    lift([f])
    assert "".join(line + "\n" for line in lines(label, map_rows(f, t_region))) == golden(name)


# -- the twin, and d f = f d ----------------------------------------------------------------------------------------
def test_lift_equals_the_slow_twin_bit_for_bit(rng) -> None:
    """Standard preimages are the RREF of [d | I], which is unique: the twin must agree on every generator."""
    res, region = run_engine("S_2", stem=14, max_s=6, algorithm="standard")
    pre = Preimages(res, "standard")
    for _ in range(3):
        x = random_class(res, region, rng, max_stem=8)
        f = lifted(res, region, pre, x.n, x.s, x.vector)
        slow = naive_lift(f)
        assert any(w.any() for w in slow.values()), "the twin compared nothing"
        for (s, g), want in slow.items():
            vec, _ = f.free_map(s).output(g)
            got = to_bool(vec[None, :], len(want))[0] if len(want) else np.zeros(0, dtype=bool)
            assert np.array_equal(got, want), f"class {x}: image of generator {g} of F_{s} differs"


def test_lift_of_a_module_map_equals_the_slow_twin() -> None:
    m, n = load_module("S_2"), load_module("Cnu")
    region = Region(max_s=5, min_degree=0, max_stem=10)
    f_res = resolve(m, region, "standard")
    g_res = resolve(n, shifted_region(region, 0, -4, 0), "standard")
    phi = parse_module_map(m, n, 4, ["x0=x4"], region.t_limit)
    f = ChainMap.from_module_map(f_res, g_res, 4, phi.matrix, region)
    lift([f])
    slow = naive_lift(f)
    assert sum(int(w.any()) for w in slow.values()) > 10, "the twin compared almost nothing"
    for (s, g), want in slow.items():
        vec, _ = f.free_map(s).output(g)
        got = to_bool(vec[None, :], len(want))[0] if len(want) else np.zeros(0, dtype=bool)
        assert np.array_equal(got, want)


def assert_chain_map(f: ChainMap) -> int:
    """d^G f(x) = f(d x) for every lifted generator above the first stage; returns how many were checked."""
    checked = 0
    for s in sorted(f.lifted):
        if s == f.s_shift:
            continue
        fs, gs = f.source.free(s), s - f.s_shift
        for t in range(f.bottom(s), f.lifted[s] + 1):
            tt = t - f.t_shift
            first, last = fs.gens_below(t), fs.gens_below(t + 1)
            if first == last or tt < f.target.min_degree + gs:
                continue
            below = f.target.free(gs - 1).gens_below(tt)
            for g in range(first, last):
                img, _ = f.free_map(s).output(g)
                left = f.target.differential(gs).apply(tt, img[None, :], below)
                dx, _ = f.source.differential(s).output(g)
                right = f.free_map(s - 1).apply(t, dx[None, :], below)
                assert np.array_equal(left, right), f"d f != f d on generator {g} of F_{s}"
                checked += 1
    return checked


def test_lifts_commute_with_the_differentials(sphere, rng) -> None:
    res, region, pre = sphere
    x = random_class(res, region, rng, max_stem=14)
    assert assert_chain_map(lifted(res, region, pre, x.n, x.s, x.vector)) > 0


def test_nassau_and_standard_preimages_give_the_same_products(rng) -> None:
    res, region = run_engine("S_2", stem=30, max_s=10, algorithm="nassau")
    x = random_class(res, region, rng, max_stem=15)
    maps = {}
    for method in ALGORITHMS:
        pre = Preimages(res, method)
        maps[method] = lifted(res, region, pre, x.n, x.s, x.vector)
        assert assert_chain_map(maps[method]) > 0
    for s, t in [(s, t) for (s, t), k in res.dims().items() if k and region.contains(s, t) and s >= x.s]:
        assert np.array_equal(maps["standard"].hom_k(s, t), maps["nassau"].hom_k(s, t)), (s, t)


def test_lifting_the_identity_gives_the_identity() -> None:
    """With RREF preimages each generator goes literally to itself (REFERENCE-PRODUCTS 1.5)."""
    m = load_module("Joker")
    res, region = run_engine("Joker", stem=12, max_s=5)
    names = [m.basis_name(d, i) for d in range(m.min_degree, m.max_degree + 1) for i in range(m.dimension(d))]
    phi = parse_module_map(m, m, 0, [f"{x}={x}" for x in names], region.t_limit)
    phi.check_linear(region.t_limit)
    f = ChainMap.from_module_map(res, res, 0, phi.matrix, region)
    lift([f])
    for s in range(region.max_s + 1):
        fs = res.free(s)
        for g in range(fs.num_gens):
            t = int(fs.gen_degrees[g])
            if not region.contains(s, t):
                continue
            vec, ngens = f.free_map(s).output(g)
            bits = to_bool(vec[None, :], fs.dimension(t, ngens))[0]
            assert np.nonzero(bits)[0].tolist() == [int(fs.offsets(t, ngens)[g])]


# -- products in Ext(S) ---------------------------------------------------------------------------------------------
def test_products_by_h_i_equal_the_filtration_one_products(sphere) -> None:
    res, region, pre = sphere
    maps = [ChainMap.from_class(res, res, (1 << i) - 1, 1, np.array([1], dtype=np.uint8), region) for i in range(5)]
    res.preimages = pre
    lift(maps)
    checked = set()
    for pm in product_matrices(res, region):
        n, s = pm.source
        assert np.array_equal(maps[pm.i].hom_k(s + 1, n + s + (1 << pm.i)), pm.matrix), (pm.i, pm.source)
        checked.add((pm.i, pm.source))
    assert len(checked) > 100 and {i for i, _ in checked} == set(range(5))  # h_4 too, as filtration_one prints


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_products_by_h_i_equal_the_filtration_one_products_through_stem_60(algorithm: str) -> None:
    res, region = run_engine("S_2", stem=60, max_s=15, algorithm=algorithm)
    ops = range(6)
    maps = [ChainMap.from_class(res, res, (1 << i) - 1, 1, np.array([1], dtype=np.uint8), region) for i in ops]
    res.preimages = Preimages(res, algorithm)
    lift(maps)
    for pm in product_matrices(res, region):
        n, s = pm.source
        assert np.array_equal(maps[pm.i].hom_k(s + 1, n + s + (1 << pm.i)), pm.matrix), (pm.i, pm.source)


def h(i: int) -> ExtClass:
    return ExtClass((1 << i) - 1, 1, (1,))


def test_adams_relations(sphere) -> None:
    res, region, pre = sphere
    hs = [lifted(res, region, pre, c.n, c.s, c.vector) for c in (h(0), h(1), h(2))]
    h0, h1, h2 = hs
    assert not times(h0, h(1)).any() and not times(h1, h(0)).any()  # h0 h1 = 0 ((1, 2) is empty)
    h1sq = ExtClass(2, 2, tuple(times(h1, h(1))))
    h1cube = times(h1, h1sq)
    assert h1cube.tolist() == [1]
    h0h2 = ExtClass(3, 2, tuple(times(h0, h(2))))
    assert times(h0, h0h2).tolist() == h1cube.tolist()  # h0^2 h2 = h1^3
    assert times(h1, ExtClass(3, 3, tuple(h1cube))).size == 0  # h1^4 lands in the empty (4, 4)
    h2sq = ExtClass(6, 2, tuple(times(h2, h(2))))
    assert times(h0, h2sq).size == 0  # h0 h2^2: (6, 3) is empty


def test_graded_commutativity_and_associativity(sphere, rng) -> None:
    res, region, pre = sphere
    for _ in range(3):
        x, y, z = (random_class(res, region, rng, max_stem=9) for _ in range(3))
        if x.s + y.s + z.s > region.max_s:
            continue
        fx, fy, fz = (lifted(res, region, pre, c.n, c.s, c.vector) for c in (x, y, z))
        assert np.array_equal(times(fx, y), times(fy, x)), (x, y)
        xy = ExtClass(x.n + y.n, x.s + y.s, tuple(int(v) for v in times(fx, y)))
        yz = ExtClass(y.n + z.n, y.s + z.s, tuple(int(v) for v in times(fy, z)))
        assert np.array_equal(times(fz, xy), times(fx, yz)), (x, y, z)


def test_products_on_a_module_through_the_unit(rng) -> None:
    """Ext(C2) over Ext(S): products by h_i through per-generator lifts into the unit agree with the filtration-one
    products, which products by h_i take without lifting at all."""
    c2, region = run_engine("C2", stem=14, max_s=6)
    unit, _ = run_engine("S_2", stem=14, max_s=6)
    alg = ExtAlgebra(c2, unit)
    at = [(t - s, s) for (s, t), k in c2.dims().items() if k]
    alg.products(h(1), at)
    assert unit.preimages.counters["calls"] == 0, "products by h_i lifted"
    for i in range(4):
        mats = alg.products(h(i), at, lifted=True)
        for pm in product_matrices(c2, region, [i]):
            assert np.array_equal(mats[pm.source], pm.matrix), (i, pm.source)


def test_a_resumed_run_lifts_the_same_way(tmp_path, rng) -> None:
    """Nothing about lifting is saved: preimages are recomputed from the saved differentials, so a run resumed from a
    save directory lifts every generator exactly as the run that wrote it."""
    from algebra.module.loader import module_from_spec
    from algebra.module.spec import read_spec
    from nassau.store.save_dir import SaveDir

    spec = read_spec("S_2")
    module = module_from_spec(spec)
    region = Region(max_s=8, min_degree=0, max_stem=22)
    store = SaveDir(tmp_path / "save", spec, module, "nassau")
    store.open(region)
    fresh = resolve(module, region, "nassau", 1, store)
    store.close()
    again = SaveDir(tmp_path / "save", spec, module, "nassau")
    again.open(region)
    resumed = resolve(module_from_spec(spec), region, "nassau", 1, again)
    assert again.loaded == len(region.bidegrees())
    x = random_class(fresh, region, rng, max_stem=10)
    maps = [lifted(r, region, Preimages(r, "nassau"), x.n, x.s, x.vector) for r in (fresh, resumed)]
    assert maps[0].lifted == maps[1].lifted
    for s in maps[0].lifted:
        a, b = maps[0].free_map(s), maps[1].free_map(s)
        assert a.num_outputs == b.num_outputs
        assert all(np.array_equal(a.output(g)[0], b.output(g)[0]) for g in range(a.num_outputs))


# -- threads and batching -------------------------------------------------------------------------------------------
def test_thread_count_does_not_change_any_image(rng) -> None:
    res, region = run_engine("S_2", stem=24, max_s=8, algorithm="nassau")
    x = random_class(res, region, rng, max_stem=10)
    one = lifted(res, region, Preimages(res, "nassau"), x.n, x.s, x.vector, threads=1)
    two = lifted(res, region, Preimages(res, "nassau"), x.n, x.s, x.vector, threads=2)
    assert one.lifted == two.lifted
    for s in one.lifted:
        a, b = one.free_map(s), two.free_map(s)
        assert a.num_outputs == b.num_outputs
        for g in range(a.num_outputs):
            va, na = a.output(g)
            vb, nb = b.output(g)
            assert na == nb and np.array_equal(va, vb)


def test_dense_preimages_are_the_blockwise_ones_from_one_build(rng, monkeypatch) -> None:
    """preimages_by_signature(dense=True) on one thread builds d once per call instead of once per signature block,
    and gives the block-by-block path's preimages and remainders bit for bit, on fresh random cycles."""
    from algebra.milnor.subalgebra import optimal_subalgebra
    from fp import random_matrix
    from nassau.engine.nassau_step import preimages_by_signature

    res, _ = run_engine("S_2", stem=30, max_s=8, algorithm="nassau")
    builds = []
    original = FreeMap.matrix
    monkeypatch.setattr(FreeMap, "matrix", lambda self, *a, **k: builds.append(1) or original(self, *a, **k))
    for s, t in [(2, 20), (4, 30), (6, 36)]:
        d, fs, low = res.differential(s), res.free(s), res.free(s - 1)
        src, tgt = fs.gens_below(t + 1), low.gens_below(t)
        sub = optimal_subalgebra(s + 1, t - res.module.max_degree)
        cycles = d.apply(t, random_matrix(5, fs.dimension(t, src), rng), tgt)
        out = {}
        for dense in (False, True):
            rem, before = cycles.copy(), len(builds)
            y = preimages_by_signature(d, t, sub, rem, src, tgt, dense=dense)
            out[dense] = (y, rem, len(builds) - before)
        assert np.array_equal(out[True][0], out[False][0]) and np.array_equal(out[True][1], out[False][1])
        assert not out[True][1].any()
        assert out[True][2] == 1 < out[False][2], (s, t, out[True][2], out[False][2])


def test_maps_lifted_together_share_one_preimage_call_per_bidegree() -> None:
    """Four maps into one resolution: one preimage call and one reduction per output bidegree, not four; one product
    batch per map and input bidegree (plus the reductions' own matrices)."""
    res, region = run_engine("S_2", stem=20, max_s=6)
    pre = Preimages(res, "standard")
    maps = [ChainMap.from_class(res, res, (1 << i) - 1, 1, np.array([1], dtype=np.uint8), region) for i in range(4)]
    batches = COUNTERS["batch_calls"]
    res.preimages = pre
    lift(maps)
    batches = COUNTERS["batch_calls"] - batches
    outputs = {(s - m.s_shift, t - m.t_shift) for m in maps for s in m.lifted
               for t in range(m.bottom(s), m.lifted[s] + 1)
               if res.new_gens.get((s, t)) and t - m.t_shift >= res.min_degree + s - m.s_shift}
    assert pre.counters["calls"] == len(outputs)
    assert pre.counters["reductions"] == len(outputs)
    builds = sum(1 for m in maps for s in m.lifted for t in range(m.bottom(s), m.lifted[s] + 1)
                 if s > m.s_shift and res.new_gens.get((s, t)) and t - m.t_shift >= res.min_degree + s - m.s_shift)
    differentials = sum(1 for s, t in outputs if s > 0)
    assert batches == builds + differentials


def test_rows_below_the_targets_bottom_take_one_call(monkeypatch) -> None:
    """A map lifted from g = x_(20,4,0) sends the generators of degree < 24 + s' to zero without a job each: one
    output call per row for them, then one per lifted bidegree (reverting to per-bidegree zeros would make ~20 per
    row)."""
    res, region = run_engine("S_2", stem=25, max_s=9)
    calls = []
    original = FreeMap.add_outputs

    def counting(self, degree, vectors, target_ngens):
        calls.append(degree)
        return original(self, degree, vectors, target_ngens)

    monkeypatch.setattr(FreeMap, "add_outputs", counting)
    f = ChainMap.from_class(res, res, 20, 4, np.array([1], dtype=np.uint8), region)
    res.preimages = Preimages(res, "nassau")
    lift([f])
    live = sum(1 for s in f.lifted for t in range(f.first_live_degree(s), f.lifted[s] + 1))
    every = sum(f.lifted[s] - f.bottom(s) + 1 for s in f.lifted)
    assert len(calls) <= len(f.lifted) + live < every / 2


def test_massey_products_lift_all_classes_together() -> None:
    """<h0, h1, x> for every x through stem 30: the f_x and the homotopies share the preimage calls of the unit's
    few output bidegrees, instead of making their own per class."""
    from nassau.products.massey import massey_products

    res, region = run_engine("S_2", stem=30, max_s=10, algorithm="nassau")
    pre = Preimages(res, "nassau")
    res.preimages = pre
    brackets = massey_products(ExtAlgebra(res, res), h(0), h(1), region)
    assert len(brackets) >= 8
    assert pre.counters["calls"] <= 10  # lifting per class would make about that many for each of them


def test_nassau_preimages_use_the_subalgebra_of_the_step_one_filtration_up(rng, monkeypatch) -> None:
    """Preimages under d_s in degree t are found over the sub-Hopf algebra B that Nassau's step at (s + 1, t) chose
    (its vanishing line measured from the module's top cell): recorded from the steps of a resolution of the Joker
    (top cell 4, so a B chosen for t rather than t - 4 shows), and from a lift of random cycles at every (s, t)."""
    from fp import random_matrix
    from nassau.engine import nassau_step, preimages
    from nassau.engine import resolve as engine

    running, by_step, by_lift = [None], {}, []
    real_step, real_choice = engine.step_nassau, nassau_step.subalgebra_for

    def step(res, s, t):
        running[0] = (s, t)
        return real_step(res, s, t)

    def chosen_in_step(module, s, t):
        by_step[running[0]] = real_choice(module, s, t)
        return by_step[running[0]]

    monkeypatch.setattr(engine, "step_nassau", step)
    monkeypatch.setattr(nassau_step, "subalgebra_for", chosen_in_step)
    monkeypatch.setattr(preimages, "subalgebra_for",
                        lambda module, s, t: by_lift.append(real_choice(module, s, t)) or by_lift[-1])
    max_s = 7
    res, _ = run_engine("Joker", stem=24, max_s=max_s, algorithm="nassau")
    assert res.module.max_degree == 4
    pre = Preimages(res, "nassau")
    checked = set()
    for (s, t) in sorted(res.dims()):
        fs = res.free(s)
        src, tgt = pre.source_ngens(s, t), pre.target_ngens(s, t)
        if not 1 <= s < max_s or not fs.dimension(t, src):
            continue
        cycles = res.differential(s).apply(t, random_matrix(3, fs.dimension(t, src), rng), tgt)
        pre(s, t, cycles)
        assert by_lift[-1] == by_step[(s + 1, t)], (s, t, by_lift[-1].describe(), by_step[(s + 1, t)].describe())
        checked.add(by_step[(s + 1, t)].describe())
    assert len(checked) >= 3, checked  # the choice changes with (s, t) in this range
