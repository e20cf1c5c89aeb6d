"""The Milnor basis in the unstable order: each degree's basis stably sorted by excess (REFERENCE-UNSTABLE 1.1).

A free unstable module on a generator of degree g is A modulo the elements of excess > g, a left ideal; with
this order its block in each degree is a prefix of the algebra's basis (the first `unstable_dimension(d, g)`
elements), and a product lands in it by dropping the terms past that prefix. The order is a wire format like
the stable one: the Ext bases of an unstable resolution follow from it. Excess is r_1 + r_2 + ... at p = 2 and
(number of Q's) + 2 (r_1 + r_2 + ...) at odd p; only Sq(d) (P(d/q) at odd p) has excess d, so it comes last.

The compiled product kernels find an output's column through the basis's lookup tables; those are rebuilt here
so that they name positions in the unstable order (p = 2: `index_map` from a stable rank; odd p: `sorted_index`
from a sorted word), and the kernels run unchanged.
"""
from __future__ import annotations

import threading

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.graded_basis import GradedBasis
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN


def excess(basis: MilnorBasis | OddMilnorBasis, words: np.ndarray) -> np.ndarray:
    """The excess of each packed word of a stable basis (int64)."""
    words = np.asarray(words, dtype=np.uint64)
    total = np.zeros(len(words), dtype=np.int64)
    if basis.prime == 2:
        for i in range(MAX_LEN):
            total += ((words >> np.uint64(FIELD_SHIFT[i])) & FIELD_MASK[i]).astype(np.int64)
        return total
    lay = basis.layout
    for k in range(lay.q_bits):
        total += ((words >> np.uint64(k)) & np.uint64(1)).astype(np.int64)
    for shift, mask in zip(lay.shifts, lay.masks, strict=True):
        total += 2 * ((words >> np.uint64(shift)) & np.uint64(mask)).astype(np.int64)
    return total


class UnstableBasis(GradedBasis):
    """A stable basis (p = 2 or odd, any profile) reordered by excess, grown on demand (thread-safe)."""

    def __init__(self, stable: MilnorBasis | OddMilnorBasis) -> None:
        self.stable = stable
        self.prime = stable.prime
        self.profile = stable.profile
        self._lock = threading.Lock()
        self.max_degree = -1
        self._order: list[np.ndarray] = []  # per degree: stable index of each unstable position
        self._words: list[np.ndarray] = []
        self._excess: list[np.ndarray] = []  # per degree, nondecreasing
        self.extend(0)

    # -- tables -------------------------------------------------------------------------------------
    def extend(self, max_degree: int) -> None:
        if max_degree > self.max_degree:
            self.stable.extend(max_degree)  # in one step (degree by degree would rebuild its tables each time)
        super().extend(max_degree)

    def _generate(self, words: list[np.ndarray], d: int) -> np.ndarray:
        stable_words = self.stable.words(d)
        exc = excess(self.stable, stable_words)
        order = np.argsort(exc, kind="stable")
        self._order.append(order)
        self._excess.append(exc[order])
        return stable_words[order]

    def _tables(self, max_degree: int) -> None:
        # counts[d, e] = elements of degree d with excess <= e (e is capped at d: nothing has more).
        self._counts = np.zeros((max_degree + 1, max_degree + 1), dtype=np.int64)
        for d, exc in enumerate(self._excess):
            self._counts[d] = np.searchsorted(exc, np.minimum(np.arange(max_degree + 1), d), side="right")
        self._lookups()

    def _lookups(self) -> None:
        """The kernels' column lookups, renamed into the unstable order (the stable basis may be ahead of us)."""
        stable, top = self.stable, len(self._order)
        position = [np.argsort(order) for order in self._order]  # stable index -> unstable position
        if self.prime == 2:
            self.rank_g = stable.rank_g
            if stable.profile.is_full:
                self.index_map = np.concatenate(position).astype(np.int64)
                self.index_map_offset = self.flat_offset
                return
            # A profile's map goes from a rank in the whole algebra to its own index (-1: not in it).
            off = stable.index_map_offset[:top + 1]
            maps = [stable.index_map[off[d]:off[d + 1]] for d in range(top)]
            self.index_map = np.concatenate([np.where(m >= 0, pos[np.maximum(m, 0)], -1) if len(pos) else m
                                             for m, pos in zip(maps, position, strict=True)]).astype(np.int64)
            self.index_map_offset = off.copy()
            return
        off = stable.flat_offset[:top + 1]
        self.sorted_words = stable.sorted_words[:off[-1]]
        self.sorted_index = np.concatenate([pos[stable.sorted_index[off[d]:off[d + 1]]]
                                            for d, pos in enumerate(position)]).astype(np.int64)
        self.layout = stable.layout

    # -- queries ------------------------------------------------------------------------------------
    def order(self, d: int) -> np.ndarray:
        """The stable index of each element of degree d, in the unstable order (a module's action tables are
        indexed stably: rows permuted by this are in ours)."""
        self.extend(d)
        return self._order[d]

    def unstable_dimensions(self, degrees: np.ndarray, excess: np.ndarray) -> np.ndarray:
        """How many elements of each degree have excess <= the given bound: the size of a free unstable module's
        block (degree t - g, bound g); 0 for a negative degree or bound."""
        degrees = np.asarray(degrees, dtype=np.int64)
        excess = np.asarray(excess, dtype=np.int64)
        if len(degrees):
            self.extend(int(degrees.max()))
        d = np.maximum(degrees, 0)
        e = np.clip(excess, 0, d)
        return np.where((degrees >= 0) & (excess >= 0), self._counts[d, e], 0)

    def unstable_dimension(self, d: int, e: int) -> int:
        return int(self.unstable_dimensions(np.array([d]), np.array([e]))[0])

    def excess(self, d: int, index: int) -> int:
        self.extend(d)
        return int(self._excess[d][index])

    def element(self, d: int, index: int) -> object:
        return self.stable.unpack(int(self.words(d)[index]))

    def index(self, elem: object) -> int:
        """Position of an element in its degree, in the unstable order."""
        d = self.stable.degree(elem)
        self.extend(d)
        return int(np.argsort(self._order[d])[self.stable.index(elem)])

    def degree(self, elem: object) -> int:
        return self.stable.degree(elem)

    def unpack(self, word: int) -> object:
        return self.stable.unpack(word)

    def contains(self, elem: object) -> bool:
        return self.stable.contains(elem)

    def generators(self, e: int) -> list:
        return self.stable.generators(e)

    def format(self, elem: object) -> str:
        return self.stable.format(elem)

    def parse(self, text: str) -> object:
        return self.stable.parse(text)
