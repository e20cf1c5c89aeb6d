"""Compiled Milnor products at p = 2, XOR-ed straight into packed F2 rows.

`product_into` enumerates the matrices of Milnor's formula for one P(R) * P(S) by a depth-first
odometer over the interior cells, row by row. Each cell jumps straight to its next value with no
carry against its anti-diagonal ((x | d) + 1) & ~d, and a row is cut as soon as its remainder x_i0
carries, so only matrices with odd coefficient are ever completed. Each surviving T is ranked with the
seqno tables and its bit flipped in the output row.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN, XI_DEGREES

_SHIFT = FIELD_SHIFT.copy()
_MASK = FIELD_MASK.astype(np.int64)
_XI = XI_DEGREES.copy()
#: Length of a `forbid` array: one entry per anti-diagonal n = 0..2 * MAX_LEN.
FORBID_LEN = 2 * MAX_LEN + 1
NO_FORBID = np.zeros(FORBID_LEN, dtype=np.int64)


def signature_forbid(profile: tuple[int, ...], signature: tuple[int, ...] = ()) -> np.ndarray:
    """Bits no entry of anti-diagonal n may use when only products of the given signature are wanted.

    T_n is the OR of the disjoint entries of anti-diagonal n, so T_n mod 2^{h_n} = sigma_n forces every
    entry's low bits inside sigma_n. Pruning on this while enumerating skips whole subtrees of matrices
    whose product lies outside the wanted columns.
    """
    out = np.zeros(FORBID_LEN, dtype=np.int64)
    for i, h in enumerate(profile):
        sig = signature[i] if i < len(signature) else 0
        out[i + 1] = ((1 << h) - 1) & ~sig
    return out


# Scratch layout (one int64 array, indexed by offset: views would cost reference counting per product).
_R = 0                                  # r_1..r_m
_S = _R + MAX_LEN                       # s_1..s_k
_T = _S + MAX_LEN                       # the product's exponents
_ROW = _T + MAX_LEN                     # x_i0, i = 1..m   (index _ROW + i)
_COL = _ROW + MAX_LEN + 1               # x_0j, j = 1..k
_DOR = _COL + MAX_LEN + 1               # OR of each anti-diagonal's cells, n = 0..m+k
_CELLS = _DOR + 2 * MAX_LEN + 1         # active cells, packed (i, j, flags)
_X = _CELLS + MAX_LEN * MAX_LEN         # value of each active cell
SCRATCH = _X + MAX_LEN * MAX_LEN


@njit(cache=True, nogil=True, inline="always")
def unpack_into(word: np.uint64, out: np.ndarray, at: int = 0) -> int:
    """Write the exponents of a packed word into out[at..]; return the length (trailing zeros dropped)."""
    n = 0
    for i in range(MAX_LEN):
        v = np.int64((word >> np.uint64(_SHIFT[i])) & np.uint64(_MASK[i]))
        out[at + i] = v
        if v != 0:
            n = i + 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _ranked(rank: int, d: int, h: int, rh: int, g: np.ndarray) -> tuple[int, int]:
    """One entry r_h of the seqno sum (entries taken from the top): the rank so far and the degree left."""
    step = rh * _XI[h]
    return rank + g[d, h] - g[d - step, h], d - step


@njit(cache=True, nogil=True, inline="always")
def _mapped(rank: int, deg: int, index_map: np.ndarray, map_offset: np.ndarray) -> int:
    """A seqno through the profile's index map, if there is one."""
    return index_map[map_offset[deg] + rank] if index_map.shape[0] > 0 else rank


@njit(cache=True, nogil=True, inline="always")
def rank_of(t: np.ndarray, length: int, deg: int, g: np.ndarray, index_map: np.ndarray,
            map_offset: np.ndarray, at: int = 0) -> int:
    """Index of P(T) (exponents t[at..at+length)) in its degree: seqno, then the profile's index map if given."""
    rank, d = 0, deg
    for h in range(length - 1, 0, -1):
        if t[at + h] != 0:
            rank, d = _ranked(rank, d, h, t[at + h], g)
    return _mapped(rank, deg, index_map, map_offset)


@njit(cache=True, nogil=True, inline="always")
def word_rank(word: np.uint64, deg: int, g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray) -> int:
    """rank_of for a packed word, its fields read from the top straight out of the word: a fifth of unpacking it
    first (the batches of the d2 lift, one product per row in most, spent two thirds of their time ranking rows)."""
    rank, d = 0, deg
    for h in range(MAX_LEN - 1, 0, -1):
        rh = np.int64((word >> np.uint64(_SHIFT[h])) & np.uint64(_MASK[h]))
        if rh != 0:
            rank, d = _ranked(rank, d, h, rh, g)
    return _mapped(rank, deg, index_map, map_offset)


@njit(cache=True, nogil=True, inline="always")
def flip(out: np.ndarray, row: int, col: int, col_map: np.ndarray) -> int:
    """XOR bit `col` of out[row] (renumbered through col_map when it is nonempty); return 1 if a bit was flipped."""
    if col_map.shape[0] > 0:
        col = col_map[col]
        if col < 0:
            return 0
    out[row, col >> 6] ^= np.uint64(1) << np.uint64(col & 63)
    return 1


@njit(cache=True, nogil=True, inline="always")
def product_into(out: np.ndarray, row: int, col_offset: int, r_word: np.uint64, s_word: np.uint64, deg: int,
                 g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray,
                 forbid: np.ndarray, sc: np.ndarray) -> int:
    """XOR P(R) * P(S) (total degree `deg`) into out[row] at column col_offset + index(T).

    A nonempty col_map renumbers output columns (-1 drops the term), restricting a row to a column mask;
    forbid[n] (see signature_forbid) lists bits no entry of anti-diagonal n may use, so only the terms
    of one signature are enumerated at all. Returns the number of terms made, kept by col_map or not (the work
    done, so that tests see what forbid prunes).
    `sc` is an int64 scratch array of at least SCRATCH entries, reused across calls.
    """
    m = unpack_into(r_word, sc, _R)
    k = unpack_into(s_word, sc, _S)
    if m == 0 or k == 0:
        # One factor is the unit.
        length = m if k == 0 else k
        src = _R if k == 0 else _S
        for i in range(length):
            sc[_T + i] = sc[src + i]
            if sc[src + i] & forbid[i + 1]:
                return 0
        flip(out, row, col_offset + rank_of(sc, length, deg, g, index_map, map_offset, _T), col_map)
        return 1
    # Only cells (i, j) with s_j > 0 and r_i >= 2^j can be nonzero; the others stay 0 and are skipped.
    for i in range(1, m + 1):
        sc[_ROW + i] = sc[_R + i - 1]
    for j in range(1, k + 1):
        sc[_COL + j] = sc[_S + j - 1]
    for n in range(m + k + 1):
        sc[_DOR + n] = 0
    # Each active cell packs (i, j, last active cell of its row, last active cell of its column).
    ncell = 0
    for i in range(1, m + 1):
        for j in range(1, k + 1):
            if sc[_S + j - 1] > 0 and (sc[_R + i - 1] >> j) > 0:
                sc[_CELLS + ncell] = (i << 8) | (j << 2)
                ncell += 1
    seen_rows = 0
    seen_cols = 0
    for c in range(ncell - 1, -1, -1):
        i = sc[_CELLS + c] >> 8
        j = (sc[_CELLS + c] >> 2) & 63
        if not (seen_rows >> i) & 1:
            sc[_CELLS + c] |= 2
            seen_rows |= 1 << i
        if not (seen_cols >> j) & 1:
            sc[_CELLS + c] |= 1
            seen_cols |= 1 << j
    made = 0
    c = 0
    first = True
    while True:
        if c == ncell:
            ok = True
            tlen = 0
            for n in range(1, m + k + 1):
                a = sc[_ROW + n] if n <= m else 0
                b = sc[_COL + n] if n <= k else 0
                d = sc[_DOR + n]
                if (a & (d | forbid[n])) != 0 or (b & (d | a | forbid[n])) != 0:
                    ok = False
                    break
                v = d | a | b
                sc[_T + n - 1] = v
                if v != 0:
                    tlen = n
            if ok:
                flip(out, row, col_offset + rank_of(sc, tlen, deg, g, index_map, map_offset, _T), col_map)
                made += 1
            c -= 1
            first = False
            if c < 0:
                break
            continue
        cell = sc[_CELLS + c]
        i = cell >> 8
        j = (cell >> 2) & 63
        n = i + j
        if first:
            v = 0
        else:
            old = sc[_X + c]
            sc[_ROW + i] += old << j
            sc[_COL + j] += old
            sc[_DOR + n] ^= old
            busy = sc[_DOR + n] | forbid[n]
            v = ((old | busy) + 1) & ~busy
        placed = False
        while v <= sc[_COL + j] and (v << j) <= sc[_ROW + i]:
            sc[_ROW + i] -= v << j
            sc[_COL + j] -= v
            sc[_DOR + n] |= v
            # Bits 0..j of x_i0 are final now (all of it after the row's last cell), and x_0j after the
            # column's last cell; anti-diagonals only gain bits, so a carry seen now never goes away.
            low = np.int64(-1) if cell & 2 else (np.int64(2) << j) - 1
            bad = sc[_ROW + i] & (sc[_DOR + i] | forbid[i]) & low
            if cell & 1:
                bad |= sc[_COL + j] & (sc[_DOR + j] | forbid[j])
            if bad != 0:
                sc[_ROW + i] += v << j
                sc[_COL + j] += v
                sc[_DOR + n] ^= v
                busy = sc[_DOR + n] | forbid[n]
                v = ((v | busy) + 1) & ~busy
                continue
            sc[_X + c] = v
            placed = True
            break
        if placed:
            c += 1
            first = True
        else:
            c -= 1
            first = False
            if c < 0:
                break
    return made


@njit(cache=True, nogil=True)
def multiply_into(out: np.ndarray, row: int, col_offset: int, r_word: np.uint64, s_word: np.uint64, deg: int,
                  g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray,
                  forbid: np.ndarray, sc: np.ndarray) -> int:
    """product_into as a call of its own, for loops that only sometimes enumerate: inlined into the product tables'
    reading loop it halved that loop's speed, and each inlined copy is compiled again on a first run."""
    return product_into(out, row, col_offset, r_word, s_word, deg, g, index_map, map_offset, col_map, forbid, sc)
