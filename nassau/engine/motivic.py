"""Minimal resolutions over the C-motivic Steenrod algebra A^C: the classical engine's matrices, read over F_2[tau].

A^C is free over F_2[tau] on the Milnor basis with weights (algebra.milnor.motivic_weight), so in each internal
degree t a free A^C-module is a free graded F_2[tau]-module, and a basis element b of weight w(b) spans
tau^{k} b in weight w(b) + k. Setting tau = 1 identifies weight w of such a module with the span V_{<= w} of the basis
elements of weight <= w: a graded submodule is an increasing family of subspaces. The classical matrix D of d_s
(entry between weights a >= b meaning tau^{a - b}) then gives, in weight w,
  the image:  D(rows of weight <= w),            the kernel:  ker D meet (rows of weight <= w).
A step (s, t) must find the new generators, a basis of K_w / (I_w + K_{w-1}) in each weight w (K = ker d_{s-1},
I the image of the old generators), and ker d_s for the next filtration. Both come from small eliminations:
- K comes as a basis k_i adapted to the weights (K_w = span of the k_i of weight <= w) in reduced form: k_i has a
  1 at its pivot column p_i where every other k_j has a 0. So a vector of K has coordinates (its entries at the
  pivots) in that basis, and a row of weight w has coordinates on the k_i of weight <= w only (it lies in I_w, inside
  K_w). Call C the rows' coordinates (the classical matrix's pivot columns).
- Modulo K_{w-1} only the coordinates of weight w count, and only the rows of weight exactly w have any there; so
  the new generators of weight w are the coordinates of weight w that are no pivot of those rows' block of C: one
  small elimination per weight.
- ker d_s on the old basis and the new generators y_i (d(y_i) = k_i): (a, b) with a C = b on the new generators'
  coordinates and 0 elsewhere, so a runs over ker C' (C' = C without the new generators' columns) and b = a C.
  The next step needs it as reducing [C' | I] with the rows by decreasing weight gives it: an RREF kernel whose
  vector with pivot row p has its other rows after p, of weight <= w(p), a basis adapted to the weights, reduced at
  its pivots. C' is block triangular: a row of weight w has coordinates of weight <= w only, and its block D_w (rows
  of weight w, covered coordinates of weight w) has full column rank. So the rows Q independent of the rows after
  them are, weight by weight, those of D_w independent of the later rows of weight w (Q_w, an elimination of D_w's
  transpose), the kernel's pivots are the other rows P, and its vector at p is p plus the combination x of Q with
  x C'_Q = C'_p, solved block by block from the highest weight with the inverses of the square blocks D_w on Q_w.
  A step finds Q, which is all the next step reads (its coordinates are the rows at the pivots P), and keeps C
  (FactoredCycles); only the vectors that become generators are solved for, at the next step. That replaces one
  elimination of C'^T (the image's rank by the rows, the widest of all at high t: 62166 rows at (13, 127)) by one
  per weight, a few per cent of its work; the elimination of C'^T itself (fp.left_kernel, tests/oracles/motivic.py)
  is the twin the tests compare it with bit for bit.
Unlike over A, a new generator y may meet ker d_s (d(y) = v with tau v = d(x): tau y - x is a cycle): that is b.
So the resolution is minimal over the graded ring F_2[tau] (d lands in tau F + A^C_{>0} F), its Hom complex into
M_2 has differentials tau^k, k >= 1, and Ext is that complex's homology (nassau.products.motivic_ext). A naive twin
that works weight by weight (tests/oracles/motivic.py) checks this step on random inputs, and the resolution's
exactness in every weight.

Nassau's algorithm is not used here: its step reads only F_{s-1}'s generators below t, which over A^C is not enough
(tau y - x above), and its zero-signature exactness would have to hold weight by weight (docs/motivic.md); the
standard step is.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Protocol

import numpy as np

from algebra.milnor.motivic_weight import degree_weights
from algebra.module.motivic import MotivicModule
from fp.left_kernel import left_kernel, triangular_split
from nassau.engine.processes import run_processes
from nassau.engine.region import Region
from nassau.engine.resolution import Added, Resolution
from nassau.engine.resolve import dependencies
from nassau.engine.scheduler import run_jobs
from nassau.engine.standard import augmentation_matrix


@dataclass(frozen=True)
class Cycles:
    """A basis of ker d_s in one degree adapted to the weights: packed rows over F_s's basis with their columns in
    the order `columns` (column j of `basis` is basis element columns[j]: the elimination's order, undone only for
    the few vectors that become generators), each vector's weight, and its pivot (a basis element), where it has a 1
    and every other vector a 0."""

    basis: np.ndarray
    weights: np.ndarray
    pivots: np.ndarray
    columns: np.ndarray

    def natural(self, which: np.ndarray, field_) -> np.ndarray:
        """The chosen vectors over F_s's basis in its own order."""
        return field_.scatter(self.basis[which], self.columns, len(self.columns))


@dataclass(frozen=True)
class WeightedAdded(Added):
    """What (s, t) added to a motivic resolution: the classical record and the new generators' weights, so that a
    copy in another process (nassau.engine.processes) adds both."""

    weights: np.ndarray


class MotivicResolution(Resolution):
    """A resolution of M^C: the classical state, each generator's weight (`weights[s]`, in generator order) and the
    kernels kept for the next filtration."""

    def __init__(self, motivic: MotivicModule) -> None:
        super().__init__(motivic.module, "standard")
        self.motivic = motivic
        self.weights: list[list[int]] = []
        self.cycles: dict[tuple[int, int], Cycles | FactoredCycles] = {}
        self._algebra_weights: dict[int, np.ndarray] = {}

    def gen_weights(self, s: int) -> np.ndarray:
        with self._lock:
            while len(self.weights) <= s:
                self.weights.append([])
            return np.array(self.weights[s], dtype=np.int64)

    def add_weighted(self, s: int, t: int, outputs: np.ndarray, weights: np.ndarray, target_ngens: int) -> None:
        self._extend_weights(s, weights)  # before the generators: never fewer weights than them
        self.add_generators(s, t, outputs, target_ngens)

    def _extend_weights(self, s: int, weights) -> None:
        with self._lock:
            while len(self.weights) <= s:
                self.weights.append([])
            self.weights[s].extend(int(w) for w in weights)

    def added(self, s: int, t: int) -> WeightedAdded:
        plain = super().added(s, t)
        fs = self.free(s)
        weights = self.gen_weights(s)[fs.gens_below(t):fs.gens_below(t + 1)]
        return WeightedAdded(**{f.name: getattr(plain, f.name) for f in fields(Added)}, weights=weights)

    def add(self, added: Added) -> None:
        """Add another copy's (s, t), with its generators' weights where the record carries them (a WeightedAdded,
        from a worker process; a save directory's records come without, and nassau.store.motivic_save reads the
        weights beside them)."""
        if isinstance(added, WeightedAdded):
            if len(added.weights) != added.count:
                raise ValueError("the record's weights do not match its generators")
            self._extend_weights(added.s, added.weights)
        super().add(added)

    def take_kernel(self, s: int, t: int):
        """Drop the kernels kept for (s + 1, t), which another worker ran (nassau.engine.processes): the classical
        one and the motivic one."""
        with self._lock:
            self.cycles.pop((s, t), None)
        return super().take_kernel(s, t)

    def algebra_weights(self, d: int) -> np.ndarray:
        found = self._algebra_weights.get(d)
        if found is None:
            found = self._algebra_weights[d] = degree_weights(self.algebra, d)
        return found

    def row_weights(self, s: int, t: int, ngens: int) -> np.ndarray:
        """The weight of each basis element P(R) g of F_s in degree t, over its first ngens generators."""
        if not ngens:
            return np.zeros(0, dtype=np.int64)
        degrees = self.free(s).gen_degrees[:ngens]
        parts = [self.algebra_weights(d) for d in (t - degrees).tolist()]
        return np.concatenate(parts) + np.repeat(self.gen_weights(s)[:ngens], [len(p) for p in parts])


@dataclass(frozen=True)
class FactoredCycles:
    """ker d_s in degree t as a step finds it (see the module's docstring): each vector's pivot (a row of d_s,
    increasing) and weight, and what gives any of its vectors: the rows' coordinates C (n x m, packed) in the cycle
    basis below, the new generators' coordinates `new`, and per weight w, from the highest, the rows Q_w, the
    coordinates of weight w and the solver L_w of C on them (fp.left_kernel.triangular_split)."""

    weights: np.ndarray
    pivots: np.ndarray
    coords: np.ndarray
    blocks: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]
    new: np.ndarray
    ncoords: int

    def natural(self, which: np.ndarray, field_) -> np.ndarray:
        """The chosen vectors over F_s's basis (the old basis, then the new generators): the pivot p, the x on Q
        with x C' = C'_p (solved weight by weight from the highest), and b = (p + x) C on the new generators'
        coordinates."""
        n = self.coords.shape[0]
        width = n + len(self.new)
        chosen = self.pivots[which]
        out = field_.zeros(len(chosen), width)
        if not len(chosen):
            return out
        out[np.arange(len(chosen)), chosen >> 6] |= np.left_shift(np.uint64(1), (chosen & 63).astype(np.uint64))
        residual = self.coords[chosen]  # (p + x so far) C: zero on the blocks solved, but for their new ones
        for q, here, solver in self.blocks:
            z = field_.gather(residual, here)
            if not z.any():  # the blocks above the chosen vectors' weights, and any they leave alone
                continue
            x = field_.matmul(z, solver, len(here), len(q))
            field_.addmul(residual, x, self.coords[q], len(q), self.ncoords)
            out |= field_.scatter(x, q, width)
        return out | field_.scatter(field_.gather(residual, self.new), np.arange(n, width), width)


def reduce_weighted(coords: np.ndarray, weights: np.ndarray, cycles: Cycles | FactoredCycles, res: Resolution
                    ) -> tuple[np.ndarray, FactoredCycles]:
    """One step's elimination (see the module's docstring). coords: d on F_s's old basis in degree t, each row (with
    its weight) in the cycle basis (packed, n x m: the matrix's entries at the cycles' pivots), in the span of the
    cycles of weight <= its own. Returns the new generators (a mask over the cycles) and ker d_s over the old basis
    and the new generators (new ones last) for the next step."""
    f = res.field
    n, m = len(weights), len(cycles.weights)
    fresh = np.ones(m, dtype=bool)
    blocks = []
    for w in np.unique(cycles.weights)[::-1]:
        here = np.nonzero(cycles.weights == w)[0]
        mine = np.nonzero(weights == w)[0]
        if len(mine):
            q, dependent, solver = triangular_split(coords, mine, here)
            fresh[here] = False
            fresh[here[dependent]] = True
            if len(q):
                blocks.append((mine[q], here, solver))
    independent = np.zeros(n, dtype=bool)
    for q, _, _ in blocks:
        independent[q] = True
    pivots = np.nonzero(~independent)[0]
    return fresh, FactoredCycles(weights[pivots], pivots, coords, tuple(blocks), np.nonzero(fresh)[0], m)


def _matrix(res: MotivicResolution, s: int, t: int, ngens: int, columns: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray, int]:
    """d_s (epsilon at s = 0) in degree t on the first ngens generators of F_s, into F_{s-1}'s generators of degree
    <= t (the module at s = 0), with the rows' weights and the number of columns. columns (s > 0): only these
    columns, in this order (the products landing elsewhere are dropped as they are made)."""
    weights = res.row_weights(s, t, ngens)
    if s == 0:
        return augmentation_matrix(res, t, ngens), weights, res.module.dimension(t)
    target = res.free(s - 1)
    target_ngens = target.gens_below(t + 1)
    ncols = target.dimension(t, target_ngens)
    d = res.differential(s)
    rows = np.arange(len(weights), dtype=np.int64)
    if columns is None:
        return d.matrix(t, rows, target_ngens), weights, ncols
    col_map = np.full(ncols, -1, dtype=np.int64)
    col_map[columns] = np.arange(len(columns), dtype=np.int64)
    blocks = np.zeros(target.num_gens, dtype=bool)  # the generators whose block holds a column asked for
    blocks[target.basis_words(t, target_ngens)[0][columns]] = True
    return (d.matrix(t, rows, target_ngens, col_map=col_map, ncols=len(columns), target_gens=blocks), weights,
            ncols)


def step_motivic(res: MotivicResolution, s: int, t: int, keep_kernel: bool = True) -> FactoredCycles | None:
    """(s, t): the new generators of F_s in degree t, with their weights; keeps ker d_s in degree t for (s + 1, t)
    and returns it (None when not kept). Of d_s's matrix the step reads only the columns at the cycles' pivots (its
    rows' coordinates in the cycle basis), and builds only those, with no product made in the blocks of F_{s-1}'s
    generators where no pivot lies: through stem 90 the whole matrix at (13, 127) is twice their size; through stem
    50 the blocks left out hold 18% of the columns (weighted by the matrices' sizes)."""
    ngens = res.free(s).gens_below(t)
    if s == 0:  # the cycles are M_t's whole basis, in order: the rows are their own coordinates
        coords, weights, ncols = _matrix(res, s, t, ngens)
        every = np.arange(ncols, dtype=np.int64)
        cycles = Cycles(res.field.identity(ncols), res.motivic.weight(t), every, every)
    else:
        cycles = res.cycles.pop((s - 1, t))  # kept by (s - 1, t), a dependency
        coords, weights, ncols = _matrix(res, s, t, ngens, cycles.pivots)
    fresh, kernel = reduce_weighted(coords, weights, cycles, res)
    if keep_kernel:
        with res._lock:
            res.cycles[(s, t)] = kernel
    outputs = cycles.natural(fresh, res.field)
    if s == 0:
        outputs = res.field.to_ints(outputs, ncols).astype(np.uint8)
    target_ngens = res.free(s - 1).gens_below(t + 1) if s else 0
    res.add_weighted(s, t, outputs, cycles.weights[fresh], target_ngens)
    return kernel if keep_kernel else None


def kernel_cycles(res: MotivicResolution, s: int, t: int) -> Cycles:
    """ker d_s in degree t over every generator of degree <= t, as a step keeps it, computed again from the
    generators (a resumed run whose region grew, or whose kept kernel was lost)."""
    rows, weights, ncols = _matrix(res, s, t, res.free(s).gens_below(t + 1))
    order = np.argsort(-weights, kind="stable")
    relations = left_kernel(rows, np.arange(ncols, dtype=np.int64), order)
    pivots = order[relations.pivots]
    return Cycles(relations.basis, weights[pivots], pivots, order)


def motivic_region(region: Region) -> Region:
    """What a run must resolve to know the region: the rectangle t <= T, s <= S around it. Over A, (s + 1, t) needs
    only ker d_s on the generators below t; over A^C a generator y of degree t may meet that kernel (tau y - x), so
    (s + 1, t) needs (s, t) and, down the column, every (s', t) with s' <= s. A stem-shaped region's top stem would
    miss generators (S_2 through stem 20, s <= 8: the one at (20, 7, 13))."""
    return Region(max_s=region.max_s, min_degree=region.min_degree, max_t=region.t_limit)


class Store(Protocol):
    def load_into(self, res: MotivicResolution, region: Region) -> int: ...
    def save(self, res: MotivicResolution, s: int, t: int, kept: FactoredCycles | None) -> None: ...
    def save_kernel(self, res: MotivicResolution, s: int, t: int, kept: FactoredCycles | None) -> None: ...


def started(motivic: MotivicModule, region: Region, store: Store | None) -> tuple[MotivicResolution,
                                                                                 list[tuple[int, int]]]:
    """A resolution of M^C, its algebra extended through the region's top degree and what the store holds loaded,
    and the region's bidegrees still to compute."""
    res = MotivicResolution(motivic)
    res.algebra.extend(region.t_limit - res.min_degree + 1)
    if store is not None:
        store.load_into(res, region)
    return res, [b for b in region.bidegrees() if not res.is_done(*b)]


def resolve_motivic(motivic: MotivicModule, region: Region, threads: int = 1, on_done=None,
                    store: Store | None = None, processes: bool = False) -> MotivicResolution:
    """Every bidegree of motivic_region(region) not loaded from the store: the standard order, (s, t) after
    (s, t-1) and (s-1, t), each kernel kept for the next filtration; each saved to the store as it finishes.
    processes: all but one of the `threads` workers are forked processes (nassau.engine.processes), each step
    bound to the worker that ran the one below it, which holds the kernel it reads: every step reads the kernel a
    one-thread run's reads, so the output is the same for any workers. A worker saves the kernel it keeps, this
    process the rest of the bidegree once its record is here."""
    whole = motivic_region(region)
    res, jobs = started(motivic, whole, store)
    deps = dependencies("standard")
    if processes and threads > 1:
        def step(s: int, t: int) -> None:
            kept = step_motivic(res, s, t, keep_kernel=whole.contains(s + 1, t))
            if store is not None:
                store.save_kernel(res, s, t, kept)

        def done(s: int, t: int) -> None:  # here, where the resolution holds (s, t) whoever computed it
            if store is not None:
                store.save(res, s, t, None)
            if on_done is not None:
                on_done(s, t)

        run_processes(res, jobs, deps, step, threads, done, bound=lambda s, t: (s - 1, t) if s else None)
        return res

    run_jobs(jobs, deps, lambda s, t: compute(res, whole, s, t, store), threads, on_done)
    return res


def compute(res: MotivicResolution, region: Region, s: int, t: int, store: Store | None = None) -> None:
    """The job (s, t), the same on a thread and on a cluster worker (nassau.store.cluster): the step, keeping
    ker d_s where (s + 1, t) is still to come in the region, then its files."""
    kept = step_motivic(res, s, t, keep_kernel=region.contains(s + 1, t))
    if store is not None:
        store.save(res, s, t, kept)
