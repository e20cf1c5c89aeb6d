"""The secondary resolution and the Adams d2 (REFERENCE-SECONDARY 1.2, 3), at p = 2.

Lifting d_{s-1} d_s to the secondary Steenrod algebra leaves, on each generator g of F_s, a kernel element
C_s(g) = sigma(d_{s-1}) sigma(d_s) g of B_0 (x) F_{s-2} (the composite). Homotopies h_s: F_s -> F_{s-2} of degree
-1 with h_2 = 0 and

    d_{s-2} h_s(g) = h_{s-1}(d_s g) + sum over the terms a g' of d_s g of A(a, C_{s-1}(g'))        (*)

are the secondary lift (nassau.secondary.lift) of the identity d d = 0, lifted through the quasi-inverses of
d_{s-2} in degree t - 1. Then d2(x_j) for x_j in Ext^{s,t} has coefficient, at a generator g' of F_{s+2} in degree
t + 1, the coefficient of 1 g_j in h_{s+2}(g'). d2 depends only on the resolution, not on the quasi-inverses chosen.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from algebra.module.interface import Module
from nassau.engine.preimages import LiftError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import lift
from nassau.secondary.lift import SecondaryError, SecondaryLift, Term

#: The folder of a save directory holding the secondary homotopies.
SAVED_KIND = "secondary"


class MapStore(Protocol):
    """Where a lift's rows are saved and resumed from: a save directory (nassau.store.save_dir.SaveDir)."""

    def save_map_rows(self, kind: str, s: int, t: int, rows: np.ndarray, ncols: int, ngens: int) -> None: ...
    def map_rows(self, kind: str, s: int, t: int) -> tuple[np.ndarray, int] | None: ...


class SecondaryHomotopy(SecondaryLift):
    """h: F_s -> F_{s-2} of degree -1 (shift (2, 0)), zero at s = 2: the secondary lift of d d = 0."""

    failure = "the module's A-terms leave the kernel of the augmentation (the secondary algebra does not act here)"

    def __init__(self, res: Resolution, region: Region, store: MapStore | None = None) -> None:
        super().__init__(res, res, (2, 0), region, name="the secondary homotopy")
        #: Where each lifted bidegree is saved and resumed from (the resolution's save directory).
        self.store = store

    def composite_terms(self, s: int) -> list[Term]:
        return [(1, self.source.differential(s), self.source.differential(s - 1))]

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        super().record(s, t, images, ngens)
        if self.store is not None:
            ncols = self.target.free(s - self.s_shift).dimension(self.out_degree(t), ngens)
            self.store.save_map_rows(SAVED_KIND, s, t, images, ncols, ngens)

    def resume(self) -> int:
        """Take every saved bidegree that continues a row from its bottom; returns how many were loaded. The
        homotopy depends on the quasi-inverses, so a save directory is only ever read by the algorithm that made it
        (its manifest says which), and the lift resumes exactly where it stopped."""
        self.skip_empty_targets()
        loaded = 0
        for s in range(self.s_shift, self.region.max_s + 1):
            t = self.lifted.get(s, self.bottom(s) - 1) + 1
            while self.region.contains(s, t) and self.source.is_done(s, t):
                saved = self.store.map_rows(SAVED_KIND, s, t)
                if saved is None or len(saved[0]) != self.source.new_gens[(s, t)]:
                    break
                SecondaryLift.record(self, s, t, saved[0], saved[1])
                loaded += 1
                t += 1
        return loaded


def check_secondary(module: Module) -> None:
    """The secondary lift exists over the whole algebra at p = 2 only."""
    if module.algebra.prime != 2:
        raise SecondaryError(f"{module.name} is a module at p = {module.algebra.prime}: the secondary Steenrod "
                             "algebra is implemented at p = 2 only")
    if not module.profile.is_full:
        raise SecondaryError(f"{module.name} lives over {module.profile.describe()}: the secondary Steenrod "
                             "algebra is implemented over the whole algebra only")


def secondary_homotopy(res: Resolution, region: Region, threads: int = 1,
                       store: MapStore | None = None) -> SecondaryHomotopy:
    """h lifted over the rows s = 2..max_s of the region (the resolution must be computed there); with a save
    directory, resumed from it and saved to it bidegree by bidegree."""
    check_secondary(res.module)
    h = SecondaryHomotopy(res, region, store)
    if store is not None:
        h.resume()
    lift([h], threads)
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
