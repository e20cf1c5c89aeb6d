"""What every algebra basis offers the free modules and the kernels: its elements degree by degree as packed words.

A basis (the Milnor basis at p = 2, at an odd prime, the unstable order) keeps `_words[d]` (the packed elements of
degree d in basis order), `_dims`, and the concatenation `flat` with `flat_offset[d]` where degree d starts, and
grows them in `extend`. The queries below read those tables, so each basis writes only how it makes one degree's
words (`_generate`) and its own lookups over all degrees (`_tables`).
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from algebra.milnor.ppart import MAX_DEGREE


class GradedBasis:
    max_degree: int
    _lock: threading.Lock
    _words: list[np.ndarray]
    _dims: np.ndarray
    flat: np.ndarray
    flat_offset: np.ndarray

    def extend(self, max_degree: int) -> None:
        """Make every degree <= max_degree available (thread-safe, idempotent). max_degree is set last: a reader
        that finds a degree below it finds every table filled for it."""
        if max_degree <= self.max_degree:
            return
        if max_degree > MAX_DEGREE:
            raise ValueError(f"degree {max_degree} is beyond the supported maximum {MAX_DEGREE}")
        with self._lock:
            if max_degree <= self.max_degree:
                return
            words = list(self._words)
            for d in range(len(words), max_degree + 1):
                words.append(self._generate(words, d))
            self._words = words
            self._dims = np.array([len(w) for w in words], dtype=np.int64)
            self.flat = np.concatenate(words)
            self.flat_offset = np.concatenate([[0], np.cumsum(self._dims)]).astype(np.int64)
            self._tables(max_degree)
            self.max_degree = max_degree

    def _generate(self, words: list[np.ndarray], d: int) -> np.ndarray:
        """The packed elements of degree d in basis order (words holds the degrees below d)."""
        raise NotImplementedError

    def _tables(self, max_degree: int) -> None:
        """The basis's own lookups over degrees <= max_degree, once _words, _dims and flat cover them."""

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

    def block_starts(self, t: int, gen_degrees: np.ndarray) -> np.ndarray:
        """0, then the running total of dim in degree t - g over the generator degrees g (nondecreasing, so the first
        is the lowest): the block starts of a free module in degree t, which free modules ask for at every bidegree.
        One compiled pass (a third of the numpy steps' cost on the few generators of a small algebra's run)."""
        if len(gen_degrees) and t - int(gen_degrees[0]) > self.max_degree:
            self.extend(t - int(gen_degrees[0]))
        return _running_dims(self._dims, t, gen_degrees)

    def flat_words(self, degrees: np.ndarray, local: np.ndarray) -> np.ndarray:
        """Packed elements of many degrees at once, given their degrees and positions in those degrees."""
        if len(degrees):
            self.extend(int(np.max(degrees)))
        return self.flat[self.flat_offset[degrees] + local]


@njit(cache=True, nogil=True)
def _running_dims(dims, t, gen_degrees):
    out = np.empty(len(gen_degrees) + 1, dtype=np.int64)
    out[0] = 0
    total = 0
    for g in range(len(gen_degrees)):
        d = t - gen_degrees[g]
        if d >= 0:
            total += dims[d]
        out[g + 1] = total
    return out
