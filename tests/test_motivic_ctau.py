"""Ext_{A^C}(M_2, M_2/tau) = Ext_{A^C/tau}: the C(tau) chart, against the long exact sequence of tau and against the
Adams-Novikov 1-line as published.

Gheorghe, Wang and Xu ("The special fiber of the motivic deformation of the stable homotopy category is algebraic",
Acta Math. 227, 2021) identify Ext_{A^C/tau} with the E2 page of the algebraic Novikov spectral sequence, which
converges to the Adams-Novikov E2 page Ext_{BP_*BP}(BP_*, BP_*) at p = 2, and Ctau's motivic Adams spectral sequence
with that algebraic Novikov spectral sequence. The regrading: a class at (stem n, s, weight w) has Novikov filtration
2w - n (its degree in Ext over the polynomial part P) and algebraic Novikov filtration s - (2w - n) (its degree in
the q_i of Ext over the exterior part: q_i = [tau_i] has stem 2^{i+1} - 2, s = 1, weight 2^i - 1, so 2w - n = 0).
So h0 (0, 1, 0) is 2 in Ext^0 = Z_(2) (filtration 0), and h1 (1, 1, 1), h2 (3, 1, 2), h3 (7, 1, 4) sit in Novikov
filtration 1, where alpha_1, alpha_{2/2}, alpha_{4/4} live.

The published table checked: Ravenel, "Complex cobordism and stable homotopy groups of spheres" (2nd ed., AMS
Chelsea 2004), Theorem 5.3.6: at p = 2, Ext^{1,2k}_{BP_*BP} is Z/2 (alpha_k) for k odd, Z/4 (alpha_{2/2}) for
k = 2 and Z/2^{nu(k)+2} for k even >= 4; and Ext^0 = Z_(2) in degree 0 (Novikov). Its algebraic Novikov
associated graded in stem 2k - 1 has log2 of that order classes. Our E2 counts there (Novikov filtration 1) exceed
it by the algebraic Novikov differentials leaving filtration 1 for filtration 2 (none enter it: filtration 0 is the
stem-0 h0-tower, permanent): in stem 15 three, Ctau's Adams d2(h4) = h0 h3^2, d3(h0 h4) = h0 d0, d3(h0^2 h4) =
h0^2 d0 (Mahowald and Tangora, "Some differentials in the Adams spectral sequence", Topology 6, 1967; Isaksen,
"Stable stems", Mem. AMS 262, 2019, Tables of Adams differentials; mapped to Ctau, whose Ext has those targets), and
in stem 23 three, among them d2(i) = h0 Pd0 and d2(h0 i) = h0^2 Pd0 (the same sources), the third forced by the
count. Through stem 29 no other stem of the 1-line differs.

C(tau) comes from F_2 resolved over A^C/tau on the stem-shaped region (nassau.engine.tau_quotient), the sphere from
the resolution over A^C on its rectangle (nassau.engine.motivic), so the long exact sequence compares two
resolutions; the twin test below reads the second with M_2/tau coefficients, as C(tau) was computed before, and
finds the same output.
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import nassau
from algebra.module.motivic import load_motivic
from fp import field, reduce_with_identity
from nassau.api.motivic import MotivicRun, default_threads, motivic_size, quotient_region, resolved_region
from nassau.engine import tau_quotient
from nassau.engine.motivic import motivic_region, resolve_motivic
from nassau.engine.region import Region
from nassau.engine.tau_quotient import WHOLE_BITS, reduce_by_weight, resolve_quotient, weight_preserving
from nassau.products.motivic_ext import MotivicClass, MotivicExt

STEM, MAX_S = 30, 17


def run(name: str) -> list[MotivicClass]:
    """The classes through STEM with s <= MAX_S (one row more resolved, so that row MAX_S's torsion is known)."""
    module = load_motivic(name)
    region = Region(max_s=MAX_S + 1, min_degree=0, max_stem=STEM)
    resolver = resolve_quotient if module.tau_quotient else resolve_motivic
    ext = MotivicExt(resolver(module, region), MAX_S + 1, region.t_limit)
    return [c for c in ext.classes if c.s <= MAX_S and c.stem <= STEM]


@pytest.fixture(scope="module")
def ctau() -> list[MotivicClass]:
    return run("Ctau")


@pytest.fixture(scope="module")
def sphere() -> list[MotivicClass]:
    return run("S_2")


def novikov(c: MotivicClass) -> int:
    """The Adams-Novikov filtration of a class of Ext(Ctau): 2w - stem."""
    return 2 * c.weight - c.stem


def alpha_order_log2(k: int) -> int:
    """log2 of the order of Ext^{1,2k}_{BP_*BP} at p = 2 (Ravenel, Theorem 5.3.6)."""
    if k % 2:
        return 1
    if k == 2:
        return 2
    nu = (k & -k).bit_length() - 1
    return nu + 2


#: The algebraic Novikov differentials leaving Novikov filtration 1 in stem 2k - 1, k <= 15 (module docstring).
DIFFERENTIALS = {8: 3, 12: 3}


def test_regrading_puts_every_class_in_both_filtrations(ctau: list[MotivicClass]) -> None:
    """Novikov filtration 2w - n and algebraic Novikov filtration s - (2w - n) are never negative; h0..h3 land where
    2, alpha_1, alpha_{2/2}, alpha_{4/4} are."""
    assert all(0 <= novikov(c) <= c.s for c in ctau)
    where = {(c.stem, c.s, c.weight): novikov(c) for c in ctau}
    assert [where[b] for b in ((0, 1, 0), (1, 1, 1), (3, 1, 2), (7, 1, 4))] == [0, 1, 1, 1]


def test_novikov_filtration_zero_is_the_stem_zero_tower(ctau: list[MotivicClass]) -> None:
    """Ext^0_{BP_*BP} = Z_(2) in degree 0: its associated graded is h0^k at (0, k, 0), and nothing else has
    Novikov filtration 0 (so no algebraic Novikov differential enters filtration 1)."""
    zero = sorted((c.stem, c.s, c.weight) for c in ctau if novikov(c) == 0)
    assert zero == [(0, k, 0) for k in range(MAX_S + 1)]


def test_novikov_one_line_is_ravenels_alpha_family(ctau: list[MotivicClass]) -> None:
    """Through stem 29: the classes of Novikov filtration 1 in stem 2k - 1 (weight k) number log2 |Ext^{1,2k}| plus
    the algebraic Novikov differentials leaving them, whose targets (Novikov filtration 2, stem 2k - 2, weight k) are
    there; no class of filtration 1 lies in an even stem (Ext^{1,t} is zero for t odd)."""
    ones = Counter(c.stem for c in ctau if novikov(c) == 1)
    assert all(n % 2 == 1 for n in ones)
    twos = Counter(c.stem for c in ctau if novikov(c) == 2)
    for k in range(1, (STEM + 1) // 2 + 1):
        d = DIFFERENTIALS.get(k, 0)
        assert ones[2 * k - 1] == alpha_order_log2(k) + d, k
        assert twos[2 * k - 2] >= d, k
    assert {(c.stem, c.s) for c in ctau if novikov(c) == 2 and c.stem == 14} >= {(14, 3), (14, 5), (14, 6)}


def f2_dim(gens: list[MotivicClass], stem: int, s: int, w: int) -> int:
    """dim_F2 of Ext(S) at (stem, s, weight w) from its F_2[tau]-module generators: tau^j c for c of weight w + j,
    nonzero while j < the torsion order."""
    return sum(1 for c in gens if (c.stem, c.s) == (stem, s) and c.weight >= w
               and (c.torsion is None or c.weight - w < c.torsion))


def tau_rank(gens: list[MotivicClass], stem: int, s: int, w: int) -> int:
    """The rank of tau: Ext(S) at weight w + 1 -> weight w (all but the generators of weight w are tau-multiples)."""
    return f2_dim(gens, stem, s, w) - sum(1 for c in gens if (c.stem, c.s, c.weight) == (stem, s, w))


def test_long_exact_sequence_of_tau(sphere: list[MotivicClass], ctau: list[MotivicClass]) -> None:
    """0 -> Sigma^{0,-1} M_2 -tau-> M_2 -> M_2/tau -> 0 gives, in internal degree t, ... -> Ext^{s}(S)_{w+1} -tau->
    Ext^{s}(S)_w -> Ext^{s}(Ctau)_w -> Ext^{s+1}(S)_{w+1} -tau-> Ext^{s+1}(S)_w -> ...; in (stem, s, weight):
    dim Ext(Ctau)^{(n, s, w)} = dim coker(tau into (n, s, w)) + dim ker(tau out of (n - 1, s + 1, w + 1)), for
    every cell through the stem with s < MAX_S. The two sides come from different readings of the complex (Ctau:
    one class per generator; S: the persistence pairing's weights and torsion orders)."""
    counts = Counter((c.stem, c.s, c.weight) for c in ctau)
    weights = range(min(c.weight for c in sphere) - 1, max(c.weight for c in sphere) + 2)
    checked = 0
    for n in range(STEM + 1):
        for s in range(MAX_S):
            for w in weights:
                coker = f2_dim(sphere, n, s, w) - tau_rank(sphere, n, s, w)
                kernel = f2_dim(sphere, n - 1, s + 1, w + 1) - tau_rank(sphere, n - 1, s + 1, w)
                assert counts[(n, s, w)] == coker + kernel, (n, s, w)
                checked += counts[(n, s, w)] > 0
    assert checked > 200


def test_over_the_quotient_algebra_as_over_a_c_read_mod_tau() -> None:
    """C(tau) through stem 40, s <= 20, as the command line prints it (every generator, its index, its h_i
    products), from F_2 over A^C/tau on the stem-shaped region and from the sphere over A^C on its rectangle read
    with M_2/tau coefficients (the twin): the same bytes. The first resolves the region and one row more only."""
    module = load_motivic("Ctau")
    region = Region(max_s=20, min_degree=0, max_stem=40)
    quotient = resolve_quotient(module, Region(max_s=21, min_degree=0, max_stem=40))
    twin = resolve_motivic(module, resolved_region(region))
    assert MotivicRun(module, region, quotient).text() == MotivicRun(module, region, twin).text()
    assert max(t - s for s, t in quotient.dims()) == 40 and max(t - s for s, t in twin.dims()) == 60
    assert motivic_size(40, None, 20, "Ctau") == len(quotient.dims()) < motivic_size(40, None, 20, "S_2")


@pytest.mark.parametrize("seed", range(6))
def test_the_weight_blocks_reduce_as_the_whole_masked_matrix(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random packed rows with random row and column weights: reducing each weight's block alone gives the image's
    pivots and the kernel's RREF of the whole matrix cut to its weight-preserving entries, bit for bit; and a
    matrix above WHOLE_BITS is never reduced whole (the blocks are what makes the quotient's step cheap)."""
    rng = np.random.default_rng(seed)
    f = field(2)
    res = SimpleNamespace(field=f)
    n, ncols = int(rng.integers(200, 420)), int(rng.integers(200, 420))
    assert n * ncols > WHOLE_BITS
    weights = int(rng.integers(2, 6))
    row_w, col_w = rng.integers(0, weights, n), rng.integers(0, weights + 1, ncols)  # a column weight with no rows
    rows = f.from_ints(rng.random((n, ncols)) < rng.uniform(0.02, 0.5))
    shapes = []

    def recording(a, width, field_=None):
        shapes.append((len(a), width))
        return reduce_with_identity(a, width, field_)

    monkeypatch.setattr(tau_quotient, "reduce_with_identity", recording)
    image, kernel = reduce_by_weight(res, rows, row_w, col_w, ncols)
    assert max(r for r, _ in shapes) < n and len(shapes) == len(np.unique(row_w))
    whole_image, whole_kernel = reduce_with_identity(weight_preserving(res, rows, row_w, col_w), ncols, f)
    assert np.array_equal(image, whole_image)
    assert np.array_equal(kernel.pivots, whole_kernel.pivots) and np.array_equal(kernel.basis, whole_kernel.basis)


def test_worker_processes_give_the_one_thread_output(tmp_path: Path) -> None:
    """C(tau) through stem 36, s <= 16, on two worker processes (a step whose kernel the other process kept
    computes it again) and on one thread: the same JSON; saved by the processes' run and resumed, the same again."""
    one = nassau.resolve("Ctau", stem=36, max_s=16, motivic=True, threads=1, progress=False)
    two = nassau.resolve("Ctau", stem=36, max_s=16, motivic=True, threads=2, processes=True, progress=False,
                         save_dir=tmp_path / "ctau")
    assert one.json_text() == two.json_text()
    again = nassau.resolve("Ctau", stem=36, max_s=16, motivic=True, threads=1, progress=False,
                           save_dir=tmp_path / "ctau")
    assert again.loaded == len(quotient_region_of(36, 16).bidegrees()) and again.json_text() == one.json_text()


def test_the_sphere_over_ac_on_worker_processes_gives_the_one_thread_output(tmp_path: Path) -> None:
    """The sphere over A^C through stem 36, s <= 16, on two worker processes (each step on the worker that ran the
    one below it, which holds the kernel it reads: on another it is not there) and on one thread: the same JSON;
    saved by the processes' run through stem 30 and resumed through 36 on processes again, the same."""
    one = nassau.resolve("S_2", stem=36, max_s=16, motivic=True, threads=1, progress=False)
    two = nassau.resolve("S_2", stem=36, max_s=16, motivic=True, threads=2, processes=True, progress=False)
    assert two.json_text() == one.json_text()
    save = tmp_path / "s2"
    nassau.resolve("S_2", stem=30, max_s=16, motivic=True, threads=2, processes=True, progress=False, save_dir=save)
    again = nassau.resolve("S_2", stem=36, max_s=16, motivic=True, threads=2, processes=True, progress=False,
                           save_dir=save)
    assert again.loaded > 0 and again.json_text() == one.json_text()


def quotient_region_of(stem: int, max_s: int) -> Region:
    return Region(max_s=max_s + 1, min_degree=0, max_stem=stem)


def test_one_thread_by_default_for_a_small_motivic_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads not named: one for C(tau) through stem 40 and the sphere through stem 30 (one thread was the faster
    there), the cores for C(tau) through stem 90 (two threads took 39 s against 68 s)."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert default_threads(quotient_region(Region(max_s=20, min_degree=0, max_stem=40))) == 1
    assert default_threads(motivic_region(resolved_region(Region(max_s=18, min_degree=0, max_stem=30)))) == 1
    assert default_threads(quotient_region(Region(max_s=48, min_degree=0, max_stem=90))) == 2
