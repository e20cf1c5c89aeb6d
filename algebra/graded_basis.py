"""What every algebra basis offers the free modules and the kernels: its elements degree by degree as packed words.

A basis (the Milnor basis at p = 2, at an odd prime, the unstable order) keeps `_words[d]` (the packed elements of
degree d in basis order), `_dims`, and the concatenation `flat` with `flat_offset[d]` where degree d starts, and
grows them in `extend`. The queries below read those tables, so each basis writes only how it builds them.
"""
from __future__ import annotations

import numpy as np


class GradedBasis:
    max_degree: int
    _words: list[np.ndarray]
    _dims: np.ndarray
    flat: np.ndarray
    flat_offset: np.ndarray

    def extend(self, max_degree: int) -> None:
        raise NotImplementedError

    def words(self, d: int) -> np.ndarray:
        """Packed elements of degree d, in basis order."""
        if d < 0:
            return np.zeros(0, dtype=np.uint64)
        self.extend(d)
        return self._words[d]

    def dimension(self, d: int) -> int:
        return len(self.words(d))

    def dimensions_array(self, degrees: np.ndarray) -> np.ndarray:
        """dim in each of many degrees at once (0 for negative degrees)."""
        degrees = np.asarray(degrees, dtype=np.int64)
        if len(degrees) and degrees.max() > self.max_degree:
            self.extend(int(degrees.max()))
        return np.where(degrees >= 0, self._dims[np.maximum(degrees, 0)], 0)

    def flat_words(self, degrees: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Packed elements of many degrees at once, given their degrees and positions in those degrees."""
        if len(degrees):
            self.extend(int(np.max(degrees)))
        return self.flat[self.flat_offset[degrees] + local]
