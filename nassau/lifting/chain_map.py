"""Chain maps between resolutions, lifted generator by generator through the target's preimages (REFERENCE-PRODUCTS 1).

f: F -> G of shift (s_f, t_f) is one FreeMap F_s -> G_{s - s_f} per input filtration s >= s_f (over the resolutions'
field: F2 or F_p), lowering internal
degrees by t_f. It starts from given data on F_{s_f}: for each generator an element of the module N that G
resolves, in degree t - t_f, lifted through epsilon. Above that, a generator x of F_s in degree t goes to a
preimage under d^G of f_{s-1}(d x), so that d f = f d. The data say which map: a class of Ext (`from_class`), a
module homomorphism (`from_module_map`).

`lift` extends many maps at once. It walks the output bidegrees (s', t') of each target in the dependency order
of Nassau's scheduler ((s', t'-1) and (s'-1, t'-1) first), and at each one makes, per map, one matrix build for
f_{s-1} on the rows d x uses, then one preimage call for all maps together: a quasi-inverse is computed once per
output bidegree however many maps pass through it. Readouts (`hom_k`) are coefficients of generators, which do
not depend on which preimages were chosen (REFERENCE-PRODUCTS 1.5).

Subclasses reuse all of this: a null-homotopy adds a term to the cycles (nassau.lifting.chain_homotopy), the map into
the doubled complex behind Sq^0 changes the degree map t -> t / 2 and its jobs (nassau.products.sq0).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np

from algebra.free.free_map import FreeMap
from nassau.engine.preimages import LiftError, Preimages
from nassau.engine.region import BidegreeST, Region
from nassau.engine.resolution import Resolution
from nassau.engine.scheduler import run_jobs


class ChainMap:
    """f: F -> G with f_s: F_s -> G_{s - s_f} lowering degrees by t_f, defined on the input region `region`."""

    def __init__(self, source: Resolution, target: Resolution, shift: BidegreeST,
                 initial: Callable[[int], np.ndarray], region: Region, name: str = "") -> None:
        self.source = source
        self.target = target
        self.s_shift, self.t_shift = shift
        #: t -> uint8 rows, one per generator of F_{s_f} in degree t, each an element of N(t - t_f).
        self.initial = initial
        self.region = region
        self.name = name
        self._maps: dict[int, FreeMap] = {}
        #: s -> largest t lifted so far in row s (rows are lifted contiguously from their bottom).
        self.lifted: dict[int, int] = {}

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_class(cls, source: Resolution, target: Resolution, n: int, s: int, vector: np.ndarray,
                   region: Region, name: str = "") -> ChainMap:
        """The cocycle F_s -> Sigma^t N sending x_(n,s,i) to vector[i] times N's bottom class (N is the unit)."""
        t = n + s
        vector = np.asarray(vector, dtype=np.uint8)
        if target.module.dimension(0) != 1 or target.module.min_degree != 0:
            raise ValueError(f"a class lifts into a resolution of the unit, not of {target.module.name}")

        def initial(deg: int) -> np.ndarray:
            count = source.new_gens.get((s, deg), 0)
            if deg != t:
                return np.zeros((count, target.module.dimension(deg - t)), dtype=np.uint8)
            return vector.reshape(count, 1)

        if len(vector) != source.new_gens.get((s, t), 0):
            raise ValueError(f"a class at (n={n}, s={s}) needs {source.new_gens.get((s, t), 0)} coordinates, "
                             f"got {len(vector)}")
        return cls(source, target, (s, t), initial, region, name)

    @classmethod
    def from_module_map(cls, source: Resolution, target: Resolution, degree: int,
                        matrix: Callable[[int], np.ndarray], region: Region, name: str = "") -> ChainMap:
        """Lift phi: M -> N raising degrees by `degree`, given as matrix(t) (dim M_t x dim N_{t+degree}, uint8):
        f_0(x) = preimage of phi(epsilon x) (REFERENCE-PRODUCTS 1.8)."""
        f0 = source.free(0)

        def initial(t: int) -> np.ndarray:
            first, last = f0.gens_below(t), f0.gens_below(t + 1)
            eps = np.array(source.augmentation[first:last], dtype=np.int64).reshape(last - first, -1)
            return ((eps @ matrix(t).astype(np.int64)) % target.field.p).astype(np.uint8)

        return cls(source, target, (0, -degree), initial, region, name)

    # -- the maps -------------------------------------------------------------------------------------
    def free_map(self, s: int) -> FreeMap:
        """f_s: F_s -> G_{s - s_f} (created on first use)."""
        fm = self._maps.get(s)
        if fm is None:
            fm = FreeMap(self.source.free(s), self.target.free(s - self.s_shift), shift=self.t_shift)
            self._maps[s] = fm
        return fm

    def bottom(self, s: int) -> int:
        """The lowest degree of row s (generators of F_s start at min_degree + s)."""
        return self.source.min_degree + s

    # -- where inputs go (a subclass with another degree map overrides these three) -------------------------
    def out_degree(self, t: int) -> int | None:
        """The internal degree of G that generators of degree t go to (None: they go to 0 whatever they are)."""
        return t - self.t_shift

    def job_of(self, s: int, t: int) -> BidegreeST:
        """The output bidegree (s', t') of G whose preimage call serves input (s, t)."""
        return s - self.s_shift, t - self.t_shift

    def depends_on(self, gs: int, tt: int) -> list[BidegreeST]:
        """The jobs that must finish before job (s', t'): the one before in its row (this row's previous
        generators) and the one that lifts row s - 1 through the degree below."""
        return [(gs, tt - 1), (gs - 1, tt - 1)]

    def first_live_degree(self, s: int) -> int:
        """Below this degree row s maps into zero modules of G, so its images are zero without any work."""
        return self.t_shift + self.target.min_degree + s - self.s_shift

    def _goes_to_zero(self, s: int, t: int) -> bool:
        tt = self.out_degree(t)
        return tt is None or tt < self.target.min_degree + s - self.s_shift

    def is_lifted(self, s: int, t: int) -> bool:
        return s >= self.s_shift and self.lifted.get(s, self.bottom(s) - 1) >= t

    def hom_k(self, s: int, t: int) -> np.ndarray:
        """uint8 (generators of G_{s - s_f} in degree t - t_f) x (generators of F_s in degree t): entry [j, i] is
        the coefficient of 1 g_j in f(x_i), i.e. row j is f^*(g_j^*) in F's Ext basis (REFERENCE-PRODUCTS 1.7)."""
        if not self.is_lifted(s, t):
            raise LiftError(f"{self.name or 'the map'} is not lifted at (n={t - s}, s={s})")
        fs, fm = self.source.free(s), self.free_map(s)
        g_s, tt = s - self.s_shift, self.out_degree(t)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        if tt is None:
            return np.zeros((0, last - first), dtype=np.uint8)
        gs = self.target.free(g_s)
        g_first, g_last = gs.gens_below(tt), gs.gens_below(tt + 1)
        out = np.zeros((g_last - g_first, last - first), dtype=np.uint8)
        packed = self.target.field.p == 2
        for i in range(first, last):
            vec, ngens = fm.output(i)
            if ngens <= g_first:
                continue
            cols = gs.offsets(tt, ngens)[g_first:g_last]
            out[:, i - first] = (vec[cols >> 6] >> (cols & 63).astype(np.uint64)) & np.uint64(1) if packed else vec[cols]
        return out

    # -- one input bidegree ---------------------------------------------------------------------------
    def _output_exists(self, s: int, t: int) -> bool:
        """Whether G_{s'}(t') is known (resolved there, or zero because t' is below the row's bottom)."""
        return self._goes_to_zero(s, t) or self.target.is_done(s - self.s_shift, self.out_degree(t))

    def ready(self, s: int, t: int) -> bool:
        """Whether (s, t) is next in its row, its inputs exist and the row below is lifted far enough."""
        if s < self.s_shift or not self.region.contains(s, t) or self.is_lifted(s, t):
            return False
        if self.lifted.get(s, self.bottom(s) - 1) != t - 1 or not self.source.is_done(s, t):
            return False
        if s > self.s_shift and not self.is_lifted(s - 1, t - 1) and t - 1 >= self.bottom(s - 1):
            return False
        return self._output_exists(s, t)

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        """What the new generators of F_s in degree t must be sent to preimages of: initial data at s_f, else
        f_{s-1}(d x), packed over the preimage target."""
        fs = self.source.free(s)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        g_s, tt = s - self.s_shift, self.out_degree(t)
        if g_s == 0:
            rows = self.initial(t)
            return self.target.field.from_ints(rows.reshape(last - first, self.target.module.dimension(tt)))
        dx = self.source.differential(s).outputs(first, last)
        return self.free_map(s - 1).apply(t, dx, preimages.target_ngens(g_s, tt))

    def images(self, s: int, t: int) -> np.ndarray:
        """f of the generators of F_s in degree t, packed rows over G_{s'}(t') (the widest width recorded)."""
        fs, fm = self.source.free(s), self.free_map(s)
        return fm.outputs(fs.gens_below(t), fs.gens_below(t + 1))

    def skip_empty_targets(self) -> None:
        """Give the generators whose image degree lies below G's bottom their zero images, one call per row: they
        need no preimage, and a map lifted from a class high up starts far above F's bottom."""
        for s in range(self.s_shift, self.region.max_s + 1):
            start = self.lifted.get(s, self.bottom(s) - 1) + 1
            last = min(self.first_live_degree(s) - 1, self.region.row_end(s))
            if last < start or not self.source.is_done(s, last):
                continue
            self.record_zeros(s, start, last)

    def record_zeros(self, s: int, start: int, last: int) -> None:
        """Zero images for every generator of F_s in degrees start..last."""
        fs = self.source.free(s)
        count = fs.gens_below(last + 1) - fs.gens_below(start)
        self.free_map(s).add_outputs(start, self.target.field.zeros(count, 0), 0)
        self.lifted[s] = last

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        self.free_map(s).add_outputs(t, images, ngens)
        self.lifted[s] = t


def lift(maps: list[ChainMap], threads: int = 1) -> None:
    """Extend every map over its region (as far as its source and target are computed), through each target
    resolution's own preimages. Output bidegrees of one target are jobs of the scheduler; a job serves every map
    through it."""
    by_target: dict[Resolution, list[ChainMap]] = defaultdict(list)
    for m in maps:
        by_target[m.target].append(m)
    for target, group in by_target.items():
        _lift_group(group, target.preimages, threads)


def _lift_group(maps: list[ChainMap], preimages: Preimages, threads: int) -> None:
    wanted: dict[BidegreeST, list[tuple[ChainMap, int, int]]] = defaultdict(list)
    for m in maps:
        m.skip_empty_targets()
        reg = m.region
        for s in range(m.s_shift, reg.max_s + 1):
            for t in range(max(m.bottom(s), m.lifted.get(s, m.bottom(s) - 1) + 1), reg.row_end(s) + 1):
                wanted[m.job_of(s, t)].append((m, s, t))

    kinds = {type(m): m for m in maps}.values()

    def deps(s: int, t: int) -> list[BidegreeST]:
        return sorted({d for m in kinds for d in m.depends_on(s, t)})

    def work(gs: int, tt: int) -> None:
        live = []
        for m, s, t in wanted[(gs, tt)]:  # per map in increasing t: a zero input first records what a later one needs
            if not m.ready(s, t):
                continue
            count = m.source.new_gens[(s, t)]
            if count and not m._goes_to_zero(s, t):
                live.append((m, s, t, count))
            else:
                m.record(s, t, m.target.field.zeros(count, 0), 0)
        if not live:
            return
        images = preimages(gs, tt, np.concatenate([m.cycles(s, t, preimages) for m, s, t, _ in live]))
        ngens = preimages.source_ngens(gs, tt)
        start = 0
        for m, s, t, count in live:
            m.record(s, t, images[start:start + count], ngens)
            start += count

    run_jobs(list(wanted), deps, work, threads)
