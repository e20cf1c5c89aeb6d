"""GF(2) matrix products by the method of four Russians, compiled with numba.

C = A B with A (m x k) and B (k x n) packed. B's rows are taken kb at a time (kb = 8, or 4 for few rows of A,
where tables would cost more than they save); for each group a table holds all 2^kb combinations of those rows,
and each row of A does one lookup per kb bits. Eight tables are applied per pass, so a row of C is read and
written once per 8*kb bits of A. Columns of C are processed in chunks so that the eight tables stay in L2.
Rows of A whose bits in a pass are all zero are skipped, so sparse A (for instance selection coefficients) is
cheap.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .packed import check_matrix, words
from .threads import use_threads

CHUNK_WORDS = 32
"""Columns of C per chunk, in words: 8 tables x 256 entries x 32 words x 8 bytes = 512 KiB."""

PARALLEL_MIN_ROWS = 2048
"""parallel=None uses threads (blocks of C's rows, each building its own tables) from this many rows of A on, if
cores are idle (fp.threads). Measured: 1000^3 gains nothing (0.81 vs 0.87 ms), 4096^3 28 vs 38 ms."""

_ZERO = np.uint64(0)

#: Test hook: how many products ran threaded, and how many (row of A, pass) table lookups ran (zero passes cost none).
COUNTERS = {"parallel_calls": 0, "lookups": 0}


@njit(cache=True, nogil=True)
def _addmul_rows(c, a, b, k, lo, hi):
    """c[lo:hi] ^= a[lo:hi] b, where b has k rows; returns the number of (row, pass) table lookups."""
    m = hi - lo
    nwb = b.shape[1]
    kb = 8 if m >= 256 else 4
    pass_bits = 8 * kb
    pass_mask = (np.uint64(1) << np.uint64(pass_bits)) - np.uint64(1) if pass_bits < 64 else ~_ZERO
    mask = np.uint64((1 << kb) - 1)
    cw = min(CHUNK_WORDS, nwb)
    tables = np.empty((8, 1 << kb, cw), dtype=np.uint64)
    lookups = 0
    for wlo in range(0, nwb, cw):
        width = min(cw, nwb - wlo)
        for bit0 in range(0, k, pass_bits):
            for t in range(8):
                for w in range(width):
                    tables[t, 0, w] = 0
                for j in range(kb):
                    row = bit0 + t * kb + j
                    half = 1 << j
                    if row < k:
                        for e in range(half):
                            for w in range(width):
                                tables[t, half + e, w] = tables[t, e, w] ^ b[row, wlo + w]
                    else:  # rows past k: the matching bits of A are padding (zero), keep the table defined
                        for e in range(half):
                            for w in range(width):
                                tables[t, half + e, w] = tables[t, e, w]
            word = bit0 >> 6
            shift = np.uint64(bit0 & 63)
            for i in range(lo, hi):
                x = (a[i, word] >> shift) & pass_mask
                if x == 0:
                    continue
                lookups += 1
                i0 = x & mask
                i1 = (x >> np.uint64(kb)) & mask
                i2 = (x >> np.uint64(2 * kb)) & mask
                i3 = (x >> np.uint64(3 * kb)) & mask
                i4 = (x >> np.uint64(4 * kb)) & mask
                i5 = (x >> np.uint64(5 * kb)) & mask
                i6 = (x >> np.uint64(6 * kb)) & mask
                i7 = (x >> np.uint64(7 * kb)) & mask
                for w in range(np.uint64(0), np.uint64(width)):
                    c[i, wlo + w] ^= (tables[0, i0, w] ^ tables[1, i1, w] ^ tables[2, i2, w] ^ tables[3, i3, w]) ^ (
                        tables[4, i4, w] ^ tables[5, i5, w] ^ tables[6, i6, w] ^ tables[7, i7, w]
                    )
    return lookups


@njit(cache=True, nogil=True, parallel=True)
def _addmul_parallel(c, a, b, k, nblocks):
    m = a.shape[0]
    step = (m + nblocks - 1) // nblocks
    lookups = 0
    for t in prange(nblocks):
        lo = t * step
        lookups += _addmul_rows(c, a, b, k, lo, min(lo + step, m))
    return lookups


def _check_operands(a: np.ndarray, b: np.ndarray, k_cols: int, n_cols: int) -> None:
    check_matrix(a, k_cols)
    check_matrix(b, n_cols)
    if a.shape[1] != words(k_cols):
        raise ValueError(f"A has {a.shape[1]} words per row, expected words(k_cols)={words(k_cols)}")
    if b.shape[0] != k_cols:
        raise ValueError(f"B has {b.shape[0]} rows but A has k_cols={k_cols} columns")


def _addmul(c: np.ndarray, a: np.ndarray, b: np.ndarray, k_cols: int, parallel: bool | None) -> None:
    m = a.shape[0]
    if m == 0 or k_cols == 0 or b.shape[1] == 0:
        return
    if parallel is None:
        parallel = use_threads(m, PARALLEL_MIN_ROWS)
    if parallel:
        lookups = _addmul_parallel(c, a, b, k_cols, 2 * numba.get_num_threads())
    else:
        lookups = _addmul_rows(c, a, b, k_cols, 0, m)
    COUNTERS["parallel_calls"] += parallel
    COUNTERS["lookups"] += lookups


def gf2_addmul(c: np.ndarray, a: np.ndarray, b: np.ndarray, k_cols: int, n_cols: int, *,
               parallel: bool | None = None) -> None:
    """C ^= A B in place (A m x k_cols, B k_cols x n_cols, C m x n_cols packed).

    The accumulating form is what callers need most (reduce by a basis, correct a differential): no temporary.
    """
    _check_operands(a, b, k_cols, n_cols)
    check_matrix(c, n_cols)
    if c.shape != (a.shape[0], b.shape[1]):
        raise ValueError(f"C has shape {c.shape}, expected {(a.shape[0], b.shape[1])}")
    _addmul(c, a, b, k_cols, parallel)


def gf2_matmul(a: np.ndarray, b: np.ndarray, k_cols: int, n_cols: int, *, parallel: bool | None = None) -> np.ndarray:
    """C = A B over GF(2) (A m x k_cols, B k_cols x n_cols packed); returns C (m x n_cols packed).

    parallel=None uses threads for many rows of A; False forces one thread.
    """
    _check_operands(a, b, k_cols, n_cols)
    c = np.zeros((a.shape[0], b.shape[1]), dtype=np.uint64)
    _addmul(c, a, b, k_cols, parallel)
    return c
