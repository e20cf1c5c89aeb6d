"""The Milnor basis of A (or of a profile subalgebra) at p = 2, degree by degree, in sseq's order.

The order is a wire format: saved vectors and printed differentials index into it. In degree d it is
length-major: P(d) first, then every element whose last nonzero index is 2, and so on; within a length
class, by the order of R - e_last one degree down. `seqno` ranks an element without a hash map, so
compiled kernels can find the column of a product term with a few table lookups.
"""
from __future__ import annotations

import functools
import re
import threading

import numpy as np

from algebra.milnor.graded_basis import GradedBasis
from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN, XI_DEGREES, degree, pack, unpack
from algebra.milnor.profile import FULL, Profile


@functools.cache
def rank_tables(max_degree: int) -> np.ndarray:
    """g[e, h] = sum_k n[e - k xi_h, h - 1], with n[e, m] = #{R of degree e using xi_1..xi_{m+1}}.

    rank(R) = sum over its nonzero r_h (h >= 1, from the top) of g[d, h] - g[d - r_h xi_h, h], where d is
    the degree still left: each unit of r_h skips every element of smaller length in that degree. Shared and
    read-only: every basis grown to one degree (the whole algebra's and each profile's) reads the same table.
    """
    n = np.zeros((max_degree + 1, MAX_LEN), dtype=np.int64)
    g = np.zeros((max_degree + 1, MAX_LEN), dtype=np.int64)
    n[:, 0] = 1
    for m in range(1, MAX_LEN):
        x = int(XI_DEGREES[m])
        for e in range(max_degree + 1):
            n[e, m] = n[e, m - 1] + (n[e - x, m] if e >= x else 0)
    for h in range(1, MAX_LEN):
        x = int(XI_DEGREES[h])
        for e in range(max_degree + 1):
            g[e, h] = n[e, h - 1] + (g[e - x, h] if e >= x else 0)
    g.flags.writeable = False
    return g


@functools.cache
def _full_basis() -> "MilnorBasis":
    """One whole-algebra basis that the profile bases share for their index maps (it only ever grows)."""
    return MilnorBasis(FULL)


class MilnorBasis(GradedBasis):
    """Basis tables of A or a profile subalgebra, grown on demand up to a degree."""

    prime = 2

    def __init__(self, profile: Profile = FULL) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._words: list[np.ndarray] = [np.zeros(1, dtype=np.uint64)]
        self.max_degree = 0
        self.rank_g = rank_tables(0)
        # For a profile algebra: per degree, full-algebra rank -> index here (-1 if absent), flattened.
        self.index_map = np.zeros(0, dtype=np.int64)
        self.index_map_offset = np.zeros(1, dtype=np.int64)
        self._dims = np.ones(1, dtype=np.int64)
        self.flat = self._words[0]
        self.flat_offset = np.array([0, 1], dtype=np.int64)
        if not profile.is_full:
            self._build_index_map(0)

    # -- tables -------------------------------------------------------------------------------------
    def _tables(self, max_degree: int) -> None:
        self.rank_g = rank_tables(max_degree)
        if not self.profile.is_full:
            self._build_index_map(max_degree)

    def _generate(self, words: list[np.ndarray], d: int) -> np.ndarray:
        parts = []
        for i in range(MAX_LEN):
            x = int(XI_DEGREES[i])
            if x > d:
                break
            cap = self.profile.max_exponent(i)
            if cap == 0:
                continue
            old = words[d - x]
            higher = old >> np.uint64(FIELD_SHIFT[i + 1]) if i + 1 < MAX_LEN else np.zeros_like(old)
            field = (old >> np.uint64(FIELD_SHIFT[i])) & FIELD_MASK[i]
            keep = (higher == 0) & (field < np.uint64(cap))
            parts.append(old[keep] + np.uint64(1 << int(FIELD_SHIFT[i])))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)

    def _build_index_map(self, max_degree: int) -> None:
        """index_map: for each full-algebra element of degree <= max_degree, its index in its degree here (-1 if
        the profile lacks it). A packed word names one element, so one sorted search over all degrees finds
        them."""
        full = _full_basis()
        full.extend(max_degree)
        words, offsets = full.flat[: full.flat_offset[max_degree + 1]], full.flat_offset[: max_degree + 2]
        mine = np.concatenate(self._words[: max_degree + 1])  # never empty: degree 0 holds 1
        my_start = np.repeat(np.cumsum([0] + [len(w) for w in self._words[:max_degree]]),
                             [len(w) for w in self._words[: max_degree + 1]])
        order = np.argsort(mine)
        at = np.minimum(np.searchsorted(mine[order], words), len(mine) - 1)
        found = mine[order[at]] == words
        self.index_map = np.where(found, order[at] - my_start[order[at]], -1).astype(np.int64)
        self.index_map_offset = offsets.astype(np.int64)

    # -- queries ------------------------------------------------------------------------------------
    def element(self, d: int, index: int) -> tuple[int, ...]:
        return unpack(int(self.words(d)[index]))

    def degree(self, r: tuple[int, ...]) -> int:
        return degree(r)

    def unpack(self, word: int) -> tuple[int, ...]:
        """The element a packed word stands for."""
        return unpack(int(word))

    def contains(self, r: tuple[int, ...]) -> bool:
        return self.profile.contains(tuple(r))

    def generators(self, e: int) -> list[tuple[int, ...]]:
        """Algebra generators of degree e (Sq^(2^k), or what the profile allows)."""
        return self.profile.generators(e)

    def format(self, r: tuple[int, ...]) -> str:
        return format_element(r)

    def parse(self, text: str) -> tuple[int, ...]:
        return parse_element(text)

    def index(self, r: tuple[int, ...]) -> int:
        """Position of P(R) in its degree (raises ValueError if it is not in this algebra)."""
        d = degree(r)
        self.extend(d)
        if not self.profile.contains(tuple(r)):
            raise ValueError(f"{format_element(r)} is not in {self.profile.describe()}")
        rank = seqno(tuple(r), d, self.rank_g)
        if self.profile.is_full:
            return rank
        return int(self.index_map[self.index_map_offset[d] + rank])


def seqno(r: tuple[int, ...], d: int, g: np.ndarray) -> int:
    """Rank of P(R) among the full algebra's basis in degree d (see rank_tables)."""
    rank = 0
    for h in range(len(r) - 1, 0, -1):
        rh = r[h]
        if rh:
            step = rh * int(XI_DEGREES[h])
            rank += int(g[d, h] - g[d - step, h])
            d -= step
    return rank


# -- text ---------------------------------------------------------------------------------------------
_SQ = re.compile(r"^(?:Sq|P)\^?(\d+)$")
_P = re.compile(r"^P\(\s*(\d+(?:\s*,\s*\d+)*)?\s*\)$")


def parse_element(text: str) -> tuple[int, ...]:
    """Parse `1`, `SqN`, `PN`, `Sq^N` or `P(r1, r2, ...)` into an exponent tuple (trailing zeros stripped)."""
    s = text.strip()
    if s == "1":
        return ()
    m = _SQ.match(s)
    if m:
        n = int(m.group(1))
        return (n,) if n else ()
    m = _P.match(s)
    if m:
        r = [int(x) for x in m.group(1).split(",")] if m.group(1) else []
        while r and r[-1] == 0:
            r.pop()
        return tuple(r)
    raise ValueError(f"cannot parse Steenrod algebra element {text!r} (expected 1, SqN or P(r1, r2, ...))")


def format_element(r: tuple[int, ...]) -> str:
    """`1` for the unit, else `P(r1, r2, ...)` as the reference prints Milnor basis elements."""
    if not r:
        return "1"
    return "P(" + ", ".join(str(x) for x in r) + ")"


def format_sq(r: tuple[int, ...]) -> str:
    """`SqN` for single-entry elements, `P(...)` otherwise: how users write relations."""
    if len(r) == 1:
        return f"Sq{r[0]}"
    return format_element(r)


__all__ = ["MilnorBasis", "parse_element", "format_element", "format_sq", "seqno", "rank_tables", "pack", "unpack"]
