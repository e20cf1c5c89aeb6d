"""Packed Milnor p-parts: one uint64 per basis element P(r1, r2, ...) at p = 2.

Entry r_i gets a fixed bit field wide enough for every degree up to MAX_DEGREE, so a whole exponent
sequence is one machine word: numpy and numba can sort, hash and mask it directly (signatures are
`(word & mask) == value`). With MAX_DEGREE = 2045 the ten fields fill exactly 64 bits.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

MAX_DEGREE = 2045
#: xi degrees at p = 2: deg xi_i = 2^i - 1, for i = 1..10.
XI_DEGREES = np.array([(1 << i) - 1 for i in range(1, 11)], dtype=np.int64)
#: Bit width of field i (r_{i+1} <= MAX_DEGREE / (2^{i+1} - 1)).
FIELD_BITS = np.array([int(MAX_DEGREE // int(x)).bit_length() for x in XI_DEGREES], dtype=np.int64)
FIELD_SHIFT = np.concatenate([[0], np.cumsum(FIELD_BITS)[:-1]]).astype(np.int64)
FIELD_MASK = np.array([(1 << int(b)) - 1 for b in FIELD_BITS], dtype=np.uint64)
MAX_LEN = len(XI_DEGREES)

assert int(FIELD_BITS.sum()) == 64


def pack(r: Sequence[int]) -> int:
    """Pack an exponent sequence (trailing zeros allowed) into its uint64 word (as a Python int)."""
    trimmed = list(r)
    while trimmed and trimmed[-1] == 0:
        trimmed.pop()
    if len(trimmed) > MAX_LEN:
        raise ValueError(f"P{tuple(r)} has more than {MAX_LEN} exponents")
    word = 0
    for i, ri in enumerate(trimmed):
        if ri < 0 or ri > int(FIELD_MASK[i]):
            raise ValueError(f"exponent r_{i + 1} = {ri} of P{tuple(r)} is out of range")
        word |= int(ri) << int(FIELD_SHIFT[i])
    return word


def unpack(word: int) -> tuple[int, ...]:
    """The exponent sequence of a packed word, trailing zeros stripped."""
    word = int(word)
    r = [(word >> int(FIELD_SHIFT[i])) & int(FIELD_MASK[i]) for i in range(MAX_LEN)]
    while r and r[-1] == 0:
        r.pop()
    return tuple(r)


def degree(r: Sequence[int]) -> int:
    """deg P(R) = sum r_i (2^i - 1)."""
    return sum(int(ri) * int(XI_DEGREES[i]) for i, ri in enumerate(r))


def trimmed(r: Sequence[int]) -> tuple[int, ...]:
    """A Milnor exponent sequence without its trailing zeros: P(1, 0) is P(1)."""
    r = list(r)
    while r and r[-1] == 0:
        r.pop()
    return tuple(r)
