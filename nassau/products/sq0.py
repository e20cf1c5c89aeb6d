"""Sq^0 on Ext(S): Ext^{s,t} -> Ext^{s,2t}, by lifting into the doubled complex (REFERENCE-PRODUCTS 5.2).

The doubled complex D has D_s(2t) = F_s(t) and zero in odd degrees, with A acting through the Verschiebung
V(P(R)) = P(R/2) (0 unless every r_i is even); its differentials and preimages are F's. The chain map phi: F -> D
starting from iota -> iota is lifted by the chain-map engine: phi_s is stored as a FreeMap from F_s with halved
generator degrees into F_s, so phi(P(R) y) = V(P(R)) phi(y) is one batched matrix build on the halved rows. Sq^0 x_i
is read off as the coefficients of 1 x_i in phi(g_j), g_j the generators of F_s(2t).
"""
from __future__ import annotations

import numpy as np

from algebra.free.free_map import FreeMap
from algebra.free.free_module import FreeModule
from algebra.milnor.ppart import FIELD_SHIFT
from fp import gather_columns, gf2_matmul
from nassau.engine.preimages import Preimages
from nassau.engine.region import BidegreeST, Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap
from nassau.products.ext_algebra import is_unit_module
from nassau.products.product_lines import Row, below_top, nonzero_bidegrees

#: The lowest bit of every exponent field: P(R) survives V exactly when none of them is set.
_ODD = np.uint64(sum(1 << int(x) for x in FIELD_SHIFT))


class DoubledChainMap(ChainMap):
    """phi: F -> D, as maps from F_s with halved degrees into F_s (input degree t goes to t / 2)."""

    def __init__(self, res: Resolution, region: Region) -> None:
        if not is_unit_module(res.module):
            raise ValueError(f"Sq^0 by the doubled complex is implemented for the sphere, not {res.module.name}")

        def initial(t: int) -> np.ndarray:
            return np.ones((res.new_gens.get((0, t), 0), 1), dtype=np.uint8)  # iota -> iota (t = 0 only)

        super().__init__(res, res, (0, 0), initial, region, "Sq^0")
        self._halved: dict[int, FreeModule] = {}

    def out_degree(self, t: int) -> int | None:
        return t // 2 if t % 2 == 0 else None

    def job_of(self, s: int, t: int) -> BidegreeST:
        return s, (t + 1) // 2

    def depends_on(self, gs: int, tt: int) -> list[BidegreeST]:
        return [(gs, tt - 1), (gs - 1, tt)]  # input 2t' needs row s - 1 through 2t' - 1, which job (s - 1, t') lifts

    def first_live_degree(self, s: int) -> int:
        return 2 * (self.target.min_degree + s)

    def halved(self, s: int) -> FreeModule:
        """F_s with every generator in degree floor(deg / 2): the source of phi_s as a FreeMap."""
        h = self._halved.get(s)
        if h is None:
            h = FreeModule(self.source.algebra, name=f"F_{s}/2")
            self._halved[s] = h
        return h

    def free_map(self, s: int) -> FreeMap:
        fm = self._maps.get(s)
        if fm is None:
            fm = FreeMap(self.halved(s), self.target.free(s))
            self._maps[s] = fm
        return fm

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        """phi of the generators of F_s in degree t, which the halved module holds in degree t / 2."""
        self._halve(s, t, t)
        self.free_map(s).add_outputs(t // 2, images, ngens)
        self.lifted[s] = t

    def record_zeros(self, s: int, start: int, last: int) -> None:
        self._halve(s, start, last)
        super().record_zeros(s, start, last)

    def _halve(self, s: int, start: int, last: int) -> None:
        """Copy F_s's generators of degrees start..last into the halved module (in the same order)."""
        for t in range(start, last + 1):
            count = self.source.new_gens.get((s, t), 0)
            if count:
                self.halved(s).add_generators(t // 2, [f"x_({t - s},{s},{j})/2" for j in range(count)])

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        """phi(d x) = sum V(P(R)) phi(y) over the terms P(R) y of d x: the rows with every r_i even, halved, as rows
        of phi_{s-1}'s matrix in degree t / 2."""
        if s == 0:
            return super().cycles(s, t, preimages)
        fs, below = self.source.free(s), self.source.free(s - 1)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        dx = self.source.differential(s).outputs(first, last)
        half, width_ngens = t // 2, preimages.target_ngens(s, t // 2)
        width = below.dimension(half, width_ngens)
        used = np.bitwise_or.reduce(dx, axis=0)
        support = np.nonzero(np.unpackbits(used.view(np.uint8), bitorder="little"))[0]
        off = below.offsets(t)
        gens = np.searchsorted(off, support, side="right") - 1
        rdeg = t - below.gen_degrees[gens]
        words = self.source.algebra.flat_words(rdeg, support - off[gens])
        keep = (words & _ODD) == 0
        if not keep.any():
            return np.zeros((len(dx), (width + 63) // 64), dtype=np.uint64)
        support, gens, rdeg, words = support[keep], gens[keep], rdeg[keep], words[keep]
        rows = self.halved(s - 1).offsets(half)[gens] + _ranks(self.source.algebra, rdeg // 2, words >> np.uint64(1))
        matrix = self.free_map(s - 1).matrix(half, rows, width_ngens)
        return gf2_matmul(gather_columns(dx, support), matrix, len(support), width)


def _ranks(algebra, degrees: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Position of each packed P(R) in the Milnor basis of its degree."""
    out = np.empty(len(words), dtype=np.int64)
    for d in np.unique(degrees):
        basis = algebra.words(int(d))
        order = np.argsort(basis)
        pick = degrees == d
        out[pick] = order[np.searchsorted(basis[order], words[pick])]
    return out


def sq0_rows(res: Resolution, region: Region, threads: int = 1) -> list[Row]:
    """Sq^0 x_(n, s, i) for every generator with (n, s) -> (2n + s, s) inside the region, in the reference's order
    (its sq0 example)."""
    from nassau.lifting.chain_map import lift

    phi = DoubledChainMap(res, region)
    lift([phi], threads)
    rows = []
    for n, s in nonzero_bidegrees(res, region):
        t = n + s
        if not below_top(region, 2 * t - s, s):
            continue
        hom = phi.hom_k(s, 2 * t)
        rows.extend(Row(n, s, i, tuple(int(v) for v in hom[i])) for i in range(hom.shape[0]))
    return rows
