"""Free unstable modules: a generator of degree g spans A / (excess > g) (REFERENCE-UNSTABLE 1.2).

Over an UnstableBasis a generator's block in degree t is the first `unstable_dimension(t - g, g)` elements of the
algebra's basis in degree t - g (the excess order makes it a prefix), so a generator of negative degree spans
nothing and F(0) is F_p. Everything else is the stable free module's: generator-major blocks, append-only.
Products are computed as if every block were the whole algebra's (`product_offsets`) and then mapped onto the
blocks (`excess_columns`), which drops exactly the terms of excess > g: that is the action on A / (excess > g).
"""
from __future__ import annotations

import numpy as np

from algebra.free.free_module import FreeModule
from algebra.unstable.basis import UnstableBasis


class UnstableFreeModule(FreeModule):
    def __init__(self, algebra: UnstableBasis, name: str = "F") -> None:
        super().__init__(algebra, name)
        self._full: dict[tuple[int, int], np.ndarray] = {}
        self._columns: dict[tuple[int, int], np.ndarray] = {}

    def offsets(self, t: int, ngens: int | None = None) -> np.ndarray:
        return self.block_starts(self._offsets, t, ngens, self._unstable_starts)

    def _unstable_starts(self, t: int, degs: np.ndarray) -> np.ndarray:
        out = np.zeros(len(degs) + 1, dtype=np.int64)
        self.algebra.unstable_dimensions(t - degs, degs).cumsum(out=out[1:])
        return out

    def product_offsets(self, t: int, ngens: int | None = None) -> np.ndarray:
        """Block starts if each block held the whole algebra's degree: where the product kernels write."""
        return self.block_starts(self._full, t, ngens, self.algebra.block_starts)

    def excess_columns(self, t: int, ngens: int | None = None) -> np.ndarray:
        """For each column of product_offsets' layout its column here, or -1 where the excess is too large."""
        key = (t, self.num_gens if ngens is None else ngens)
        out = self._columns.get(key)
        if out is None:
            full, mine = self.product_offsets(t, key[1]), self.offsets(t, key[1])
            out = np.full(int(full[-1]), -1, dtype=np.int64)
            for g in range(key[1]):
                size = int(mine[g + 1] - mine[g])
                out[full[g]:full[g] + size] = np.arange(mine[g], mine[g] + size)
            self._columns[key] = out
        return out
