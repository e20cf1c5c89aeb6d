"""Minimal resolutions over A^C/tau, whose Ext is Ext_{A^C}(M^C, M_2/tau) (C(tau)'s, docs/motivic.md): the classical
standard step on the differentials' matrices cut to their weight-preserving entries.

A^C/tau has A's Milnor basis with its weights (algebra.milnor.motivic_weight), and its product P(R) P(S) is the
classical product's terms of weight w(R) + w(S): over A^C the others carry a power of tau. A differential of
weight-homogeneous generators therefore has, in degree t, the classical matrix of d_s with every entry between
basis elements of different weights set to zero: block diagonal by weight. Reducing [D | I] then never adds rows of
different weights, and the RREF of a sum of subspaces on disjoint columns is the union of theirs, so ker d_s comes
as weight-homogeneous vectors, each of the weight of its pivot, and so do the new generators chosen from it. So
each weight's block is reduced alone (reduce_by_weight): the image's pivots and the kernel's RREF are the blocks'
put together, bit for bit those of reducing the whole masked matrix (weight_preserving, its twin in the tests), at
a fraction of the work (the resolution has about four times the classical one's generators, split over the weights).

A^C/tau is connected over F_2, so (as over A) a generator of degree t never meets ker d_{s-1} in degree t: step
(s, t) needs (s, t - 1) and (s - 1, t) only, and the classical stem-shaped region is the whole run, where the
resolution over A^C needs the rectangle below t <= N + S (nassau.engine.motivic.motivic_region) for the tau
multiples tau y - x. C(tau) through stem 90, every s, takes 1.4 times the classical standard run's CPU so
(docs/speed.md), where over A^C it took as long as the sphere's motivic run, hours.

The twin is the resolution over A^C of the sphere read with M_2/tau coefficients (nassau.products.motivic_ext's
quotient), which is how C(tau) was computed before: the tests compare the two outputs (every generator, its index
and its h_i products) byte for byte (tests/test_motivic_ctau.py).
"""
from __future__ import annotations

import numpy as np

from algebra.module.motivic import MotivicModule
from fp import Subspace, reduce_with_identity
from nassau.engine.motivic import MotivicResolution, Store, started
from nassau.engine.processes import run_processes
from nassau.engine.region import Region
from nassau.engine.resolve import dependencies
from nassau.engine.scheduler import run_jobs
from nassau.engine.standard import augmentation_matrix, pad_columns

#: The algorithm name a save directory of such a run carries: not "motivic", whose directories hold a resolution
#: over A^C (refused here in one line, as classical directories are).
ALGORITHM = "motivic-tau-quotient"
#: A matrix of at most this many entries is reduced whole, masked: a block's own reduction costs about 0.1 ms of
#: Python, more than the whole small matrix's.
WHOLE_BITS = 1 << 16


def weight_preserving(res: MotivicResolution, rows: np.ndarray, row_weights: np.ndarray,
                      col_weights: np.ndarray) -> np.ndarray:
    """The packed rows with every entry in a column of another weight than the row's cleared: the matrix that
    reduce_by_weight's blocks make up (its twin in the tests, and its path for a small matrix)."""
    if not len(rows):
        return rows
    present, which = np.unique(row_weights, return_inverse=True)
    masks = res.field.from_ints((col_weights[None, :] == present[:, None]).astype(np.int64))
    return rows & masks[which]


def reduce_by_weight(res: MotivicResolution, rows: np.ndarray, row_weights: np.ndarray, col_weights: np.ndarray,
                     ncols: int) -> tuple[np.ndarray, Subspace]:
    """reduce_with_identity of the rows cut to their weight-preserving entries, a weight's block at a time: the
    image's pivot columns (increasing) and the kernel's RREF over the rows."""
    f = res.field
    n = len(row_weights)
    if n * ncols <= WHOLE_BITS:
        return reduce_with_identity(weight_preserving(res, rows, row_weights, col_weights[:ncols]), ncols, f)
    image, basis, pivots = [], [], []
    for w in np.unique(row_weights):
        mine = np.nonzero(row_weights == w)[0]
        cols = np.nonzero(col_weights[:ncols] == w)[0]
        img, ker = reduce_with_identity(f.gather(rows[mine], cols), len(cols), f)
        image.append(cols[img])
        basis.append(f.scatter(ker.basis, mine, n))
        pivots.append(mine[ker.pivots])
    pivots_all = np.concatenate(pivots)
    order = np.argsort(pivots_all, kind="stable")
    return (np.sort(np.concatenate(image)),
            Subspace.from_rref(np.concatenate(basis)[order], pivots_all[order], n, f))


def column_weights(res: MotivicResolution, s: int, t: int, ngens: int) -> np.ndarray:
    """The weights of what d_s maps to in degree t: F_{s-1}'s basis on its first ngens generators (M_t at s = 0)."""
    return res.motivic.weight(t) if s == 0 else res.row_weights(s - 1, t, ngens)


def reduced(res: MotivicResolution, s: int, t: int, ngens: int, target_ngens: int) -> tuple[np.ndarray, Subspace, int]:
    """d_s over A^C/tau in degree t on F_s's first ngens generators, into the first target_ngens generators of
    F_{s-1} (M_t at s = 0), reduced (reduce_by_weight): its image's pivots, its kernel, its number of columns."""
    if s == 0:
        ncols = res.module.dimension(t)
        rows = augmentation_matrix(res, t, ngens)
    else:
        ncols = res.free(s - 1).dimension(t, target_ngens)
        rows = res.differential(s).matrix(t, np.arange(res.free(s).dimension(t, ngens), dtype=np.int64), target_ngens)
    image, kept = reduce_by_weight(res, rows, res.row_weights(s, t, ngens), column_weights(res, s, t, target_ngens),
                                   ncols)
    return image, kept, ncols


def kernel(res: MotivicResolution, s: int, t: int) -> Subspace:
    """ker d_s in degree t (on the generators below t: those of degree t never meet it): the one (s, t) kept, or
    computed again (a resumed run, or a job whose kernel another step took)."""
    kept = res.take_kernel(s, t)
    if kept is not None:
        return kept
    ngens = res.free(s).gens_below(t)
    target_ngens = 0 if s == 0 else res.free(s - 1).gens_below(t)
    return reduced(res, s, t, ngens, target_ngens)[1]


def step_quotient(res: MotivicResolution, s: int, t: int, keep_kernel: bool = True) -> int:
    """(s, t): the new generators of F_s in degree t over A^C/tau, with their weights (their pivots'); keeps ker d_s
    in degree t for (s + 1, t). Returns how many."""
    fs = res.free(s)
    ngens = fs.gens_below(t)
    target_ngens = res.free(s - 1).gens_below(t + 1) if s else 0
    image_pivots, kept, ncols = reduced(res, s, t, ngens, target_ngens)
    if keep_kernel:
        res.set_kernel(s, t, kept)
    in_image = np.zeros(ncols, dtype=bool)
    in_image[image_pivots] = True
    if s == 0:
        fresh = np.nonzero(~in_image)[0]
        outputs = np.eye(ncols, dtype=np.uint8)[fresh]
    else:
        desired = kernel(res, s - 1, t)
        new = ~in_image[desired.pivots]
        fresh = desired.pivots[new]
        outputs = pad_columns(desired.basis[new], ncols, res.field)
    res.add_weighted(s, t, outputs, column_weights(res, s, t, target_ngens)[fresh], target_ngens)
    return len(fresh)


def resolve_quotient(motivic: MotivicModule, region: Region, threads: int = 1, on_done=None,
                     store: Store | None = None, processes: bool = False) -> MotivicResolution:
    """Every bidegree of the region not loaded from the store, over A^C/tau, in the standard order ((s, t) after
    (s, t - 1) and (s - 1, t)); each saved to the store as it finishes (its weights and generators: a resumed run
    computes the kernels it reads again). processes: all but one of the `threads` workers are forked processes
    (nassau.engine.processes); a step whose kernel was kept by another computes it again, the same RREF, so the
    output is the same for any workers."""
    res, jobs = started(motivic, region, store)

    def work(s: int, t: int) -> None:
        step_quotient(res, s, t, keep_kernel=region.contains(s + 1, t))

    def done(s: int, t: int) -> None:  # here, where the resolution holds (s, t) whoever computed it
        if store is not None:
            store.save(res, s, t, None)
        if on_done is not None:
            on_done(s, t)

    deps = dependencies("standard")
    if processes and threads > 1:
        run_processes(res, jobs, deps, work, threads, done)
    else:
        run_jobs(jobs, deps, work, threads, done)
    return res
