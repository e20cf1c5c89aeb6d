"""ker (x -> x A) over F2 as reducing [A | I] gives it, found by reducing A's transpose instead.

A here is some columns of packed rows, the rows taken in a given order (the motivic step orders them by weight,
nassau.engine.motivic). Reducing [A | I] (n rows, m + n columns) leaves the kernel as the RREF basis over the rows
in that order: each vector's first 1, its pivot, is a 0 in every other vector. The same basis is read off the RREF
R of A^T (m <= n rows, n columns), about a third of the work: with A^T's columns in reverse order, each non-pivot
column j gives the vector with a 1 at j and R[r, j] at the pivot column of each row r (the null space of A^T),
which is 0 at every other non-pivot column; read back in the given order, the vector's first 1 is at j. An RREF
basis of a space is unique, so the two are the same bit for bit (tests/test_left_kernel.py checks it on random
matrices against reduce_with_identity, the obvious twin).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ctz
from .m4ri import row_reduce
from .packed import check_matrix, words
from .subspace import Subspace

_ONE = np.uint64(1)


def left_kernel(rows: np.ndarray, columns: np.ndarray, order: np.ndarray) -> Subspace:
    """ker (x -> x A), A = rows[order][:, columns] (packed F2 rows): an RREF Subspace over the rows in `order`,
    the kernel reduce_with_identity(A, len(columns)) returns."""
    check_matrix(rows, 0)
    n = len(order)
    if rows.shape[0] != n:
        raise ValueError(f"order must list each of the {rows.shape[0]} rows once, got {n} entries")
    place = np.full(n, -1, dtype=np.int64)
    place[np.asarray(order, dtype=np.int64)] = n - 1 - np.arange(n, dtype=np.int64)
    column_of = np.full(rows.shape[1] * 64, -1, dtype=np.int64)
    column_of[np.asarray(columns, dtype=np.int64)] = np.arange(len(columns), dtype=np.int64)
    transpose = _transpose(rows, column_of, place, len(columns), words(n))
    pivots = row_reduce(transpose, n) if len(columns) and n else np.zeros(0, dtype=np.int64)
    basis, kernel_pivots = _null_rows(transpose, pivots, n)
    return Subspace.from_rref(basis, kernel_pivots, n)


@njit(cache=True, nogil=True)
def _transpose(rows, column_of, place, m, width):
    """out[column_of[c], place[r]] = rows[r, c] over the columns c with column_of[c] >= 0: a walk over the set
    bits."""
    out = np.zeros((m, width), dtype=np.uint64)
    for r in range(rows.shape[0]):
        i = place[r]
        bit = _ONE << np.uint64(i & 63)
        wi = i >> 6
        for w in range(rows.shape[1]):
            x = rows[r, w]
            while x:
                c = column_of[(w << 6) + ctz(x)]
                x &= x - _ONE
                if c >= 0:
                    out[c, wi] |= bit
    return out


@njit(cache=True, nogil=True)
def _null_rows(reduced, pivots, n):
    """The null space of the reduced A^T (pivot rows first) in reverse column order, by increasing pivot."""
    rank = len(pivots)
    slot = np.full(n, -1, dtype=np.int64)  # a non-pivot column of A^T -> its vector
    for r in range(rank):
        slot[pivots[r]] = -2
    out_pivots = np.empty(n - rank, dtype=np.int64)
    q = 0
    for j in range(n - 1, -1, -1):
        if slot[j] == -1:
            slot[j] = q
            out_pivots[q] = n - 1 - j
            q += 1
    out = np.zeros((n - rank, (n + 63) >> 6), dtype=np.uint64)
    for q in range(n - rank):
        p = out_pivots[q]
        out[q, p >> 6] |= _ONE << np.uint64(p & 63)
    for r in range(rank):
        p = n - 1 - pivots[r]
        bit = _ONE << np.uint64(p & 63)
        for w in range(reduced.shape[1]):
            x = reduced[r, w]
            while x:
                q = slot[(w << 6) + ctz(x)]
                x &= x - _ONE
                if q >= 0:
                    out[q, p >> 6] |= bit
    return out, out_pivots
