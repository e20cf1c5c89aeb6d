"""The secondary resolution and the Adams d2 (REFERENCE-SECONDARY 1.2, 3), at p = 2.

Lifting d_{s-1} d_s to the secondary Steenrod algebra leaves, on each generator g of F_s, a kernel element
C_s(g) = sigma(d_{s-1}) sigma(d_s) g of B_0 (x) F_{s-2} (the composite). Homotopies h_s: F_s -> F_{s-2} of degree
-1 with h_2 = 0 and

    d_{s-2} h_s(g) = h_{s-1}(d_s g) + sum over the terms a g' of d_s g of A(a, C_{s-1}(g'))        (*)

are lifted through the quasi-inverses of d_{s-2} in degree t - 1: a chain map of shift (2, 1) whose cycles carry
the A-terms (the intermediate), so the one lifting engine (nassau.chain_map) does it, batched per bidegree.
Then d2(x_j) for x_j in Ext^{s,t} has coefficient, at a generator g' of F_{s+2} in degree t + 1, the coefficient
of 1 g_j in h_{s+2}(g'). d2 depends only on the resolution, not on the quasi-inverses chosen.
"""
from __future__ import annotations

import threading

import numpy as np

from algebra.module import Module
from algebra.pair_algebra import Element, PairAlgebra
from fp import from_bool
from nassau.chain_map import ChainMap, lift
from nassau.quasi_inverses import LiftError, Preimages
from nassau.region import Region
from nassau.resolution import Resolution


class SecondaryError(ValueError):
    """The secondary lift cannot be made (odd prime, profile, or an obstruction at s = 3)."""


class Composites:
    """C_s(g) per generator, computed once on demand: {target generator of F_{s-2}: kernel element}."""

    def __init__(self, res: Resolution, pair: PairAlgebra) -> None:
        self.res, self.pair = res, pair
        self._lock = threading.Lock()
        self._done: dict[tuple[int, int], dict[int, Element]] = {}

    def __call__(self, s: int, g: int) -> dict[int, Element]:
        key = (s, g)
        with self._lock:
            hit = self._done.get(key)
        if hit is not None:
            return hit
        res, pair = self.res, self.pair
        d_s, d_prev = res.differential(s), res.differential(s - 1)
        low_degrees = res.free(s - 2).gen_degrees
        t = int(res.free(s).gen_degrees[g])
        out: dict[int, Element] = {}
        for k in range(int(d_s.term_start[g]), int(d_s.term_start[g + 1])):
            a = res.algebra.unpack(int(d_s.term_s[k]))
            mid = int(d_s.term_gen[k])
            for q in range(int(d_prev.term_start[mid]), int(d_prev.term_start[mid + 1])):
                b = res.algebra.unpack(int(d_prev.term_s[q]))
                low = int(d_prev.term_gen[q])
                elem = out.get(low)
                if elem is None:
                    elem = out[low] = pair.zero(t - int(low_degrees[low]))
                elem.add(pair.sigma_product(a, b))
        for low, elem in out.items():
            if not elem.is_kernel:
                raise SecondaryError(f"the lifted composite d d on {res.free(s).gen_names[g]} is not in the kernel "
                                     f"(at its F_{s - 2} generator {res.free(s - 2).gen_names[low]})")
        with self._lock:
            return self._done.setdefault(key, out)


class SecondaryHomotopy(ChainMap):
    """h: F_s -> F_{s-2} of degree -1 (shift (2, 1)), zero at s = 2, lifted from (*) by the chain-map engine."""

    def __init__(self, res: Resolution, region: Region) -> None:
        def zero(t: int) -> np.ndarray:
            return np.zeros((res.new_gens.get((2, t), 0), res.module.dimension(t - 1)), dtype=np.uint8)

        super().__init__(res, res, (2, 1), zero, region, name="the secondary homotopy")
        self.pair = PairAlgebra(res.algebra)
        self.composites = Composites(res, self.pair)
        self._checks: dict[tuple[int, int], np.ndarray] = {}

    def intermediate(self, s: int, t: int, width_gens: int) -> np.ndarray:
        """The A-terms of (*) for the generators of F_s in degree t, packed over F_{s-3}(t - 1) (first width_gens
        generators)."""
        res, pair = self.source, self.pair
        fs, low = res.free(s), res.free(s - 3)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        off = low.offsets(t - 1, width_gens)
        rows = np.zeros((last - first, int(off[-1])), dtype=np.uint8)
        d = res.differential(s)
        for row, g in enumerate(range(first, last)):
            for k in range(int(d.term_start[g]), int(d.term_start[g + 1])):
                a = res.algebra.unpack(int(d.term_s[k]))
                for target, x in self.composites(s - 1, int(d.term_gen[k])).items():
                    if target >= width_gens:
                        continue
                    v = pair.a_multiply(a, x)
                    if v.any():
                        start = int(off[target])
                        rows[row, start:start + len(v)] ^= v
        return from_bool(rows.astype(bool)) if rows.size else np.zeros((last - first, 0), dtype=np.uint64)

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        base = super().cycles(s, t, preimages)
        if s == self.s_shift:
            return base
        gens = preimages.target_ngens(s - 2, t - 1)
        extra = self.intermediate(s, t, gens)
        out = base.copy()
        out[:, :extra.shape[1]] ^= extra
        if s == self.s_shift + 1:
            self._checks[(s, t)] = out.copy()
        return out

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        wanted = self._checks.pop((s, t), None)
        if wanted is not None and len(images):
            got = self.source.differential(1).apply(t - 1, images, self.source.free(0).gens_below(t - 1))
            width = min(got.shape[1], wanted.shape[1])
            if (got[:, :width] != wanted[:, :width]).any() or got[:, width:].any() or wanted[:, width:].any():
                raise SecondaryError(f"failed to lift at (n={t - s}, s={s}): the module's A-terms leave "
                                     "the kernel of the augmentation (the secondary algebra does not act here)")
        super().record(s, t, images, ngens)


def check_secondary(module: Module) -> None:
    """The secondary lift exists over the whole algebra at p = 2 only."""
    if module.algebra.prime != 2:
        raise SecondaryError(f"{module.name} is a module at p = {module.algebra.prime}: the secondary Steenrod "
                             "algebra is implemented at p = 2 only")
    if not module.profile.is_full:
        raise SecondaryError(f"{module.name} lives over {module.profile.describe()}: the secondary Steenrod "
                             "algebra is implemented over the whole algebra only")


def secondary_homotopy(res: Resolution, region: Region, preimages: Preimages | None = None,
                       threads: int = 1) -> SecondaryHomotopy:
    """h lifted over the rows s = 2..max_s of the region (the resolution must be computed there)."""
    check_secondary(res.module)
    h = SecondaryHomotopy(res, region)
    lift([h], {id(res): preimages or Preimages(res)}, threads)
    return h


def d2_matrix(h: SecondaryHomotopy, n: int, s: int) -> np.ndarray:
    """d2 on Ext at (n, s): uint8 (dim there) x (dim at (n - 1, s + 2)); both must be lifted."""
    t = n + s
    if not h.is_lifted(s + 2, t + 1):
        raise LiftError(f"d2 from (n={n}, s={s}) needs (n={n - 1}, s={s + 2}), which is not computed")
    return h.hom_k(s + 2, t + 1)  # (generators of F_s in degree t) x (generators of F_{s+2} in degree t + 1)


def d2_entries(h: SecondaryHomotopy, region: Region) -> list[tuple[tuple[int, int, int], list[int]]]:
    """((n, s, j), d2 x_(n,s,j) over the target's basis) for every generator of a nonzero source whose target
    (n - 1, s + 2) is nonzero and in the region, stem by stem, then by s (the reference's order)."""
    res = h.source
    out = []
    for n in range(res.min_degree, region.chart_max_stem + 1):
        for s in range(1, region.max_s - 1):
            t = n + s
            if t <= 0 or not region.contains(s, t) or not region.contains(s + 2, t + 1):
                continue
            if not res.new_gens.get((s, t)) or not res.new_gens.get((s + 2, t + 1)):
                continue
            for j, row in enumerate(d2_matrix(h, n, s)):
                out.append(((n, s, j), [int(v) for v in row]))
    return out


def d2_lines(h: SecondaryHomotopy, region: Region) -> str:
    """The reference's `secondary` output: `d_2 x_(n, s, j) = [v]`, zero lines included."""
    return "".join(f"d_2 x_({n}, {s}, {j}) = [{', '.join(map(str, row))}]\n"
                   for (n, s, j), row in d2_entries(h, region))
