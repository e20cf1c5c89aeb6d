"""Null-homotopies of a composite of chain maps whose class is zero (REFERENCE-PRODUCTS 3.3): what Massey products
are read from.

For chain maps f: F -> U (shift c) and B: U -> U (shift b) with c b = 0, h: F -> U of shift
sigma - (1, 0) = (c_s + b_s - 1, c_t + b_t) with d h + h d = B f is built like a lifted chain map: h_{sigma_s - 1} = 0,
and above it h(x) is a preimage of B(f(x)) - h(d x) (over F_p the minus matters: it is the reference's sign, so
d h = B f - h d with no sign on d). It is a ChainMap whose cycles carry the extra term B f, so it is lifted by the
same engine, batched with other homotopies into the same target.
"""
from __future__ import annotations

import numpy as np

from nassau.engine.preimages import LiftError, Preimages
from nassau.engine.region import Region
from nassau.lifting.chain_map import ChainMap


class ChainHomotopy(ChainMap):
    def __init__(self, left: ChainMap, right: ChainMap, region: Region, name: str = "") -> None:
        if left.target is not right.source:
            raise ValueError("the homotopy composes maps F -> U -> V: the left map must land where the right starts")
        sigma_s, sigma_t = left.s_shift + right.s_shift, left.t_shift + right.t_shift
        target = right.target

        def zero(t: int) -> np.ndarray:
            count = left.source.new_gens.get((sigma_s - 1, t), 0)
            return np.zeros((count, target.module.dimension(t - sigma_t)), dtype=np.uint8)

        super().__init__(left.source, target, (sigma_s - 1, sigma_t), zero, region, name)
        self.left, self.right = left, right

    def ready(self, s: int, t: int) -> bool:
        if not super().ready(s, t):
            return False
        if s < self.s_shift + 1:
            return True
        return self.left.is_lifted(s, t) and self.right.is_lifted(s - self.left.s_shift, t - self.left.t_shift)

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        """B(f(x)) - h(d x) for the new generators x of F_s in degree t (zero at the first stage)."""
        base = super().cycles(s, t, preimages)
        if s == self.s_shift:
            return base
        u_s, u_t = s - self.left.s_shift, t - self.left.t_shift
        g_s, tt = s - self.s_shift, t - self.t_shift
        below = preimages.target_ngens(g_s, tt)
        # B f(x) may have terms 1 g on generators of degree tt (the product c b read at x); they vanish when c b = 0.
        low, f = self.target.free(g_s - 1), self.target.field
        everything = low.gens_below(tt + 1)
        full = self.right.free_map(u_s).apply(u_t, self.left.images(s, t), everything)
        width = low.dimension(tt, below)
        if f.any_in(full, np.arange(width, low.dimension(tt, everything))):
            raise LiftError(f"{self.name or 'the composite'} is not null: the inner product is nonzero at "
                            f"(n={t - s}, s={s})")
        return f.subtract(full[:, :f.storage(width)], base)
