"""ker (x -> x A) over F2 as reducing [A | I] gives it, found by reducing A's transpose instead.

A here is some columns of packed rows, the rows taken in a given order (the motivic step orders them by weight,
nassau.engine.motivic). Reducing [A | I] (n rows, m + n columns) leaves the kernel as the RREF basis over the rows
in that order: each vector's first 1, its pivot, is a 0 in every other vector. The same basis is read off the RREF
R of A^T (m <= n rows, n columns), about a third of the work: with A^T's columns in reverse order, each non-pivot
column j gives the vector with a 1 at j and R[r, j] at the pivot column of each row r (the null space of A^T),
which is 0 at every other non-pivot column; read back in the given order, the vector's first 1 is at j. An RREF
basis of a space is unique, so the two are the same bit for bit (tests/test_fp_left_kernel.py checks it on random
matrices against reduce_with_identity, the obvious twin).

triangular_split reads from one reduction of [A^T | I] what the motivic step needs of each weight's block: the rows
independent of the later ones (the complement of left_kernel's pivots), the columns dependent on the earlier ones,
and a solver for the square block they leave (the same test file checks all three against their twins).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ctz
from .m4ri import row_reduce
from .masked import gather_columns
from .packed import check_matrix, words
from .subspace import Subspace
from .transpose import transpose_reversed_into

_ONE = np.uint64(1)
#: Blocks of fewer entries are transposed by a walk over their set bits in one compiled call, larger ones 64 x 64
#: bits at a time (fp.transpose, after a gather): at 3000 x 1500 entries 1.2 ms against 25.7 ms, at 40 x 30 the
#: walk's one call takes 30 us where the gather and the transpose's calls take 47.
SMALL_BLOCK = 1 << 16


def left_kernel(rows: np.ndarray, columns: np.ndarray, order: np.ndarray) -> Subspace:
    """ker (x -> x A), A = rows[order][:, columns] (packed F2 rows): an RREF Subspace over the rows in `order`,
    the kernel reduce_with_identity(A, len(columns)) returns."""
    transpose, pivots = _reduced_transpose(rows, columns, order)
    n = len(order)
    # The null space: a vector per non-pivot column j of A^T (the last first), with its 1 at j and R[r, j] at the
    # pivot of each row r, all read back in `order` (position n - 1 - j).
    free = np.ones(n, dtype=bool)
    free[pivots] = False
    free_columns = np.nonzero(free)[0][::-1]
    slot = np.full(n, -1, dtype=np.int64)
    slot[free_columns] = np.arange(len(free_columns), dtype=np.int64)
    kernel_pivots = n - 1 - free_columns
    basis = np.zeros((len(free_columns), words(n)), dtype=np.uint64)
    basis[np.arange(len(free_columns)), kernel_pivots >> 6] = np.left_shift(np.uint64(1),
                                                                            (kernel_pivots & 63).astype(np.uint64))
    _scatter_transposed(transpose, len(pivots), n - 1 - pivots, slot, basis)
    return Subspace.from_rref(basis, kernel_pivots, n)


def triangular_split(a: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For A = a[rows][:, columns] (a packed, n = len(rows), ncols = len(columns)): the rows of A independent of the
    rows after them (Q, increasing: where an RREF basis of ker (x -> x A) has no pivot, left_kernel with the rows in
    their order), the columns of A in the span of the columns before them (increasing: the non-pivot columns of A's
    RREF), and L (ncols x |Q|, packed, zero on those columns) with (z L) A[Q] = z on every other column, for any z:
    a solver for the square invertible block.

    One reduction does all three: [A^T | I] with A^T's columns (A's rows) and its rows (A's columns) both reversed.
    Its rows with a pivot in A^T have their pivots at Q and, in the identity part, E with E A^T[:, Q] = I; the others
    are relations among A's columns, whose pivots (each relation's last column) are the dependent columns, and
    being reduced there E is zero on them, so E is the inverse of A[Q] on the other columns and L its transpose."""
    check_matrix(a, 0)
    rows, columns = np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)
    if len(columns) and int(columns.max()) >= 64 * a.shape[1]:
        raise ValueError(f"columns must lie below {64 * a.shape[1]}")
    n, ncols = len(rows), len(columns)
    head = words(n) * 64
    aug = _transposed_with_identity(a, rows, columns)
    pivots = row_reduce(aug, head + ncols) if ncols else np.zeros(0, dtype=np.int64)
    rank = int(np.searchsorted(pivots, n))
    independent = (n - 1 - pivots[:rank])[::-1].copy()
    dependent = np.sort(ncols - 1 - (pivots[rank:] - head))
    return independent, dependent, _solver(aug, rank, words(n), ncols)


def _reduced_transpose(rows: np.ndarray, columns: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A^T with its columns (A's rows in `order`) reversed, in RREF, and its pivot columns."""
    check_matrix(rows, 0)
    n = len(order)
    if rows.shape[0] != n:
        raise ValueError(f"order must list each of the {rows.shape[0]} rows once, got {n} entries")
    place = np.empty(n, dtype=np.int64)  # row -> its column of A^T, the order reversed
    place[np.asarray(order, dtype=np.int64)] = n - 1 - np.arange(n, dtype=np.int64)
    column_of = np.full(rows.shape[1] * 64, -1, dtype=np.int64)
    column_of[np.asarray(columns, dtype=np.int64)] = np.arange(len(columns), dtype=np.int64)
    transpose = np.zeros((len(columns), words(n)), dtype=np.uint64)
    _scatter_transposed(rows, n, place, column_of, transpose)
    pivots = row_reduce(transpose, n) if len(columns) and n else np.zeros(0, dtype=np.int64)
    return transpose, pivots


@njit(cache=True, nogil=True)
def _scatter_transposed(src, nrows, row_to, column_to, out):
    """out[column_to[c], row_to[r]] |= src[r, c] for the first nrows rows, over the columns with column_to[c] >= 0:
    a walk over the set bits."""
    for r in range(nrows):
        i = row_to[r]
        bit = _ONE << np.uint64(i & 63)
        wi = i >> 6
        for w in range(src.shape[1]):
            x = src[r, w]
            while x:
                c = column_to[(w << 6) + ctz(x)]
                x &= x - _ONE
                if c >= 0:
                    out[c, wi] |= bit


def _transposed_with_identity(a: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """[A^T | I], A = a[rows][:, columns], with A^T's rows (A's columns) and columns (A's rows) both reversed, I
    after a word boundary."""
    n, ncols = len(rows), len(columns)
    if n * ncols < SMALL_BLOCK:
        return _transposed_with_identity_bits(a, rows, columns)
    head = words(n)
    aug = np.zeros((ncols, head + words(ncols)), dtype=np.uint64)
    if n and ncols:
        lo, hi = int(columns.min()) >> 6, (int(columns.max()) >> 6) + 1  # the words A's columns lie in
        block = gather_columns(np.ascontiguousarray(a[rows, lo:hi]), columns - 64 * lo)
        transpose_reversed_into(block, n, ncols, aug)
    c = np.arange(ncols, dtype=np.int64)
    aug[c, head + (c >> 6)] |= np.left_shift(_ONE, (c & 63).astype(np.uint64))
    return aug


def _solver(aug: np.ndarray, rank: int, head: int, ncols: int) -> np.ndarray:
    """L from the reduced [A^T | I] (triangular_split): L[c, rank - 1 - i] = the identity part of row i at A's
    column c (the identity's column ncols - 1 - c)."""
    if rank * ncols < SMALL_BLOCK:
        return _solver_bits(aug, rank, head, ncols)
    out = np.zeros((ncols, words(rank)), dtype=np.uint64)
    if rank and ncols:
        transpose_reversed_into(np.ascontiguousarray(aug[:rank, head:]), rank, ncols, out)
    return out


@njit(cache=True, nogil=True)
def _transposed_with_identity_bits(a, rows, columns):
    """_transposed_with_identity by a walk over the set bits: faster below SMALL_BLOCK entries (one compiled call)."""
    n, ncols = rows.shape[0], columns.shape[0]
    head = (n + 63) >> 6
    aug = np.zeros((ncols, head + ((ncols + 63) >> 6)), dtype=np.uint64)
    column_of = np.full(a.shape[1] << 6, -1, dtype=np.int64)  # a's column -> its row of A^T
    lo, hi = a.shape[1], 0
    for j in range(ncols):
        column_of[columns[j]] = ncols - 1 - j
        lo, hi = min(lo, columns[j] >> 6), max(hi, (columns[j] >> 6) + 1)
    for r in range(n):
        i = n - 1 - r
        bit = _ONE << np.uint64(i & 63)
        wi = i >> 6
        src = rows[r]
        for w in range(lo, hi):
            x = a[src, w]
            while x:
                j = column_of[(w << 6) + ctz(x)]
                x &= x - _ONE
                if j >= 0:
                    aug[j, wi] |= bit
    for c in range(ncols):
        k = (head << 6) + c
        aug[c, k >> 6] |= _ONE << np.uint64(k & 63)
    return aug


@njit(cache=True, nogil=True)
def _solver_bits(aug, rank, head, ncols):
    """_solver by a walk over the set bits: faster below SMALL_BLOCK entries (one compiled call)."""
    out = np.zeros((ncols, (rank + 63) >> 6), dtype=np.uint64)
    for i in range(rank):
        col = rank - 1 - i
        bit = _ONE << np.uint64(col & 63)
        wc = col >> 6
        for w in range(head, aug.shape[1]):
            x = aug[i, w]
            while x:
                j = ((w - head) << 6) + ctz(x)
                x &= x - _ONE
                out[ncols - 1 - j, wc] |= bit
    return out
