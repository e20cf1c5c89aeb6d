"""Motivic weights of Milnor basis elements: how A lifts to the C-motivic Steenrod algebra A^C.

A^C is free over F_2[tau] on lifts of the Milnor basis: P(R) lifts to the dual of prod tau_{i-1}^{r_i mod 2}
xi_i^{floor(r_i / 2)} (Voevodsky; Dugger-Isaksen, "The motivic Adams spectral sequence", Geom. Topol. 2010, 2.2), of
weight w(R) = sum_i floor(r_i / 2) (2^i - 1) + (r_i mod 2) (2^{i-1} - 1): Sq^{2k} has weight k, Sq^{2k-1} weight k-1.
A product is the classical one with each term T multiplied by tau^{w(R) + w(S) - w(T)}, a power that is never
negative (tests check it), so a classical matrix entry between basis elements of weights a (row) and b (column) stands
for tau^{a - b}.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN

#: Weight of one unit of r_i, split by parity: floor(r/2) (2^i - 1) + (r mod 2) (2^{i-1} - 1).
_XI = np.array([(1 << i) - 1 for i in range(1, MAX_LEN + 1)], dtype=np.int64)
_TAU = np.array([(1 << (i - 1)) - 1 for i in range(1, MAX_LEN + 1)], dtype=np.int64)


def weight(r: tuple[int, ...]) -> int:
    """The motivic weight of P(R)."""
    return sum((ri // 2) * int(_XI[i]) + (ri % 2) * int(_TAU[i]) for i, ri in enumerate(r))


def word_weights(words: np.ndarray) -> np.ndarray:
    """The weights of packed Milnor words (algebra.milnor.ppart), as int64."""
    out = np.zeros(len(words), dtype=np.int64)
    for i in range(MAX_LEN):
        r = ((words >> np.uint64(FIELD_SHIFT[i])) & FIELD_MASK[i]).astype(np.int64)
        out += (r // 2) * _XI[i] + (r % 2) * _TAU[i]
    return out


def degree_weights(algebra: MilnorBasis, d: int) -> np.ndarray:
    """The weight of every basis element of degree d, in the basis order."""
    algebra.extend(d)
    return word_weights(algebra.words(d))
