"""Minimal resolutions over the C-motivic Steenrod algebra A^C: the classical engine's matrices, read over F_2[tau].

A^C is free over F_2[tau] on the Milnor basis with weights (algebra.milnor.motivic_weight), so in each internal
degree t a free A^C-module is a free graded F_2[tau]-module, and a basis element b of weight w(b) spans
tau^{k} b in weight w(b) + k. Setting tau = 1 identifies weight w of such a module with the span V_{<= w} of the basis
elements of weight <= w: a graded submodule is an increasing family of subspaces. The classical matrix of d_s
(entry between weights a >= b meaning tau^{a - b}) then gives, in weight w,
  the image:  D(rows of weight <= w),            the kernel:  ker D meet (rows of weight <= w),
so both are filtrations that ordinary F_2 elimination finds when the rows come in weight order:
- ker d_s: reduce [D | I] with the rows by decreasing weight. The RREF kernel's vector with pivot row p has all
  its other rows after p, so it lies in weight w(p), and the vectors of pivot weight <= w span the kernel in
  weight w (a kernel vector's coefficient at each pivot is that basis vector's): a basis adapted to the filtration.
- new generators at (s, t): ker d_{s-1} needs, in weight w, a basis of K_w / (I_w + K_{w-1}) (I the image of the
  old generators). Take the rows and the kernel basis together by increasing weight (the rows first at a weight):
  a kernel vector independent of those before it is a new generator of its weight, and nothing else is.
Both are one reduction (reduce_weighted). Unlike over A, a new generator y of degree t may meet ker d_s in degree t
(d(y) = v with tau v = d(x): then tau y - x is a cycle), so that kernel is taken over the new generators too.
So the resolution is minimal over the graded ring F_2[tau] (d lands in tau F + A^C_{>0} F), its Hom complex into
M_2 has differentials tau^k, k >= 1, and Ext is that complex's homology (nassau.products.motivic_ext). A naive twin
that works weight by weight (tests/oracles/motivic.py) checks this step on the same inputs.

Nassau's algorithm is not used here: its signature blocks split the columns by a sub-Hopf algebra quotient, and
keeping the weight filtration through its quasi-inverses is not done; the standard step is.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.motivic_weight import degree_weights
from algebra.module.motivic import MotivicModule
from fp import reduce_with_identity
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.scheduler import run_jobs
from nassau.engine.standard import augmentation_matrix, pad_columns


class MotivicResolution(Resolution):
    """A resolution of M^C: the classical state, each generator's weight (`weights[s]`, in generator order) and the
    kernels kept for the next filtration with their weights."""

    def __init__(self, motivic: MotivicModule) -> None:
        super().__init__(motivic.module, "standard")
        self.motivic = motivic
        self.weights: list[list[int]] = []
        self.weighted_kernels: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def gen_weights(self, s: int) -> np.ndarray:
        with self._lock:
            while len(self.weights) <= s:
                self.weights.append([])
            return np.array(self.weights[s], dtype=np.int64)

    def add_weighted(self, s: int, t: int, outputs: np.ndarray, weights: np.ndarray, target_ngens: int) -> None:
        with self._lock:
            while len(self.weights) <= s:
                self.weights.append([])
            self.weights[s].extend(int(w) for w in weights)
        self.add_generators(s, t, outputs, target_ngens)

    def row_weights(self, s: int, t: int, ngens: int) -> np.ndarray:
        """The weight of each basis element P(R) g of F_s in degree t, over its first ngens generators."""
        fs = self.free(s)
        gw = self.gen_weights(s)
        parts = [degree_weights(self.algebra, t - int(fs.gen_degrees[g])) + gw[g] for g in range(ngens)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def reduce_weighted(rows: np.ndarray, weights: np.ndarray, cycles: np.ndarray, cycle_weights: np.ndarray,
                    ncols: int, res: Resolution) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step's elimination. rows: d on F_s's old basis in degree t (packed, with weights); cycles: a
    filtration-adapted basis of what F_s must cover (ker d_{s-1}, with weights). Returns the new generators (a mask
    over the cycles: those independent of the rows and cycles of lower weight, the rows first at equal weight) and
    ker d_s on the old basis and the new generators (packed over both, new ones last) as an adapted basis with
    its weights.

    All vectors are reduced together, by decreasing weight (cycles before rows at a weight): an RREF relation's pivot
    is its vector of highest weight, the last in increasing order, so the pivots are the vectors dependent on those
    before them. The relations whose pivot is a row have zeros at the other pivots, the dependent cycles: they span
    the relations among the rows and the new generators, adapted to the weights."""
    f = res.field
    n, m = len(weights), len(cycle_weights)
    vectors = np.concatenate([rows, cycles]) if n else cycles
    kind = np.concatenate([np.ones(n, dtype=np.int64), np.zeros(m, dtype=np.int64)])
    all_weights = np.concatenate([weights, cycle_weights])
    order = np.lexsort((kind, -all_weights))
    _, relations = reduce_with_identity(vectors[order], ncols, f)
    pivots = order[relations.pivots]
    dependent = np.zeros(n + m, dtype=bool)
    dependent[pivots] = True
    fresh = ~dependent[n:]
    keep = pivots < n
    basis = f.scatter(relations.basis[keep], order, n + m)
    columns = np.concatenate([np.arange(n, dtype=np.int64), n + np.nonzero(fresh)[0]])
    return fresh, f.gather(basis, columns), weights[pivots[keep]]


def _matrix(res: MotivicResolution, s: int, t: int, ngens: int, below: int) -> tuple[np.ndarray, np.ndarray, int]:
    """d_s (epsilon at s = 0) in degree t on the first ngens generators of F_s, into F_{s-1}'s generators of degree
    < below (the module at s = 0), with the rows' weights and the number of columns."""
    weights = res.row_weights(s, t, ngens)
    if s == 0:
        return augmentation_matrix(res, t, ngens), weights, res.module.dimension(t)
    target = res.free(s - 1)
    target_ngens = target.gens_below(below)
    ncols = target.dimension(t, target_ngens)
    d = res.differential(s)
    return d.matrix(t, np.arange(len(weights), dtype=np.int64), target_ngens), weights, ncols


def step_motivic(res: MotivicResolution, s: int, t: int, keep_kernel: bool = True) -> int:
    """(s, t): the new generators of F_s in degree t, with their weights; keeps ker d_s in degree t for (s + 1, t)."""
    ngens = res.free(s).gens_below(t)
    rows, weights, ncols = _matrix(res, s, t, ngens, below=t + 1)
    if s == 0:
        cycles, cycle_weights = res.field.identity(ncols), res.motivic.weight(t)
        target_ngens = 0
    else:
        cycles, cycle_weights = res.weighted_kernels.pop((s - 1, t))  # kept by (s - 1, t), a dependency
        cycles = pad_columns(cycles, ncols, res.field)
        target_ngens = res.free(s - 1).gens_below(t + 1)
    fresh, kernel, kernel_weights = reduce_weighted(rows, weights, cycles, cycle_weights, ncols, res)
    if keep_kernel:
        with res._lock:
            res.weighted_kernels[(s, t)] = (kernel, kernel_weights)
    outputs = cycles[fresh]
    if s == 0:
        outputs = res.field.to_ints(outputs, ncols).astype(np.uint8)
    res.add_weighted(s, t, outputs, cycle_weights[fresh], target_ngens)
    return int(fresh.sum())


def motivic_region(region: Region) -> Region:
    """What a run must resolve to know the region: the rectangle t <= T, s <= S around it. Over A, (s + 1, t) needs
    only ker d_s on the generators below t; over A^C a generator y of degree t may meet that kernel (tau y - x), so
    (s + 1, t) needs (s, t) and, down the column, every (s', t) with s' <= s. A stem-shaped region's top stem would
    miss generators (S_2 through stem 20, s <= 8: the one at (20, 7, 13))."""
    return Region(max_s=region.max_s, min_degree=region.min_degree, max_t=region.t_limit)


def resolve_motivic(motivic: MotivicModule, region: Region, threads: int = 1, on_done=None,
                    res: MotivicResolution | None = None) -> MotivicResolution:
    """Every bidegree of motivic_region(region) not already in `res`: the standard order, (s, t) after (s, t-1) and
    (s-1, t), each kernel kept for the next filtration."""
    res = MotivicResolution(motivic) if res is None else res
    whole = motivic_region(region)
    res.algebra.extend(whole.t_limit - res.min_degree + 1)
    jobs = [b for b in whole.bidegrees() if not res.is_done(*b)]

    def work(s: int, t: int) -> None:
        step_motivic(res, s, t, keep_kernel=whole.contains(s + 1, t))

    run_jobs(jobs, lambda s, t: [(s, t - 1), (s - 1, t)], work, threads, on_done)
    return res
