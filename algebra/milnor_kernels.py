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

from algebra.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN, XI_DEGREES

_SHIFT = FIELD_SHIFT.copy()
_MASK = FIELD_MASK.astype(np.int64)
_XI = XI_DEGREES.copy()
#: Scratch size: rows/cols <= MAX_LEN, diagonals <= 2 * MAX_LEN.
SCRATCH = 4 * MAX_LEN + 2 * MAX_LEN * MAX_LEN + 8
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


@njit(cache=True, nogil=True, inline="always")
def unpack_into(word: np.uint64, out: np.ndarray) -> int:
    """Write the exponents of a packed word into out[0..]; return the length (trailing zeros dropped)."""
    n = 0
    for i in range(MAX_LEN):
        v = np.int64((word >> np.uint64(_SHIFT[i])) & np.uint64(_MASK[i]))
        out[i] = v
        if v != 0:
            n = i + 1
    return n


@njit(cache=True, nogil=True, inline="always")
def rank_of(t: np.ndarray, length: int, deg: int, g: np.ndarray, index_map: np.ndarray,
            map_offset: np.ndarray) -> int:
    """Index of P(T) in its degree: seqno, then the profile's index map when one is given."""
    rank = 0
    d = deg
    for h in range(length - 1, 0, -1):
        rh = t[h]
        if rh != 0:
            step = rh * _XI[h]
            rank += g[d, h] - g[d - step, h]
            d -= step
    if index_map.shape[0] > 0:
        return index_map[map_offset[deg] + rank]
    return rank


@njit(cache=True, nogil=True, inline="always")
def flip(out_row: np.ndarray, col: int, col_map: np.ndarray) -> int:
    """XOR bit `col` (renumbered through col_map when it is nonempty); return 1 if a bit was flipped."""
    if col_map.shape[0] > 0:
        col = col_map[col]
        if col < 0:
            return 0
    out_row[col >> 6] ^= np.uint64(1) << np.uint64(col & 63)
    return 1


@njit(cache=True, nogil=True)
def product_into(out_row: np.ndarray, col_offset: int, r_word: np.uint64, s_word: np.uint64, deg: int,
                 g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray,
                 forbid: np.ndarray, scratch: np.ndarray) -> int:
    """XOR P(R) * P(S) (total degree `deg`) into out_row at column col_offset + index(T).

    A nonempty col_map renumbers output columns (-1 drops the term), restricting a row to a column mask;
    forbid[n] (see signature_forbid) lists bits no entry of anti-diagonal n may use, so only the terms
    of one signature are enumerated at all.
    Returns the number of terms flipped (for counting work). `scratch` is an int64 work array of at
    least SCRATCH entries, reused across calls to avoid allocation on the hot path.
    """
    r = scratch[0:MAX_LEN]
    s = scratch[MAX_LEN:2 * MAX_LEN]
    m = unpack_into(r_word, r)
    k = unpack_into(s_word, s)
    t = scratch[2 * MAX_LEN:3 * MAX_LEN]
    if m == 0 or k == 0:
        # One factor is the unit.
        length = m if k == 0 else k
        src = r if k == 0 else s
        for i in range(length):
            t[i] = src[i]
            if src[i] & forbid[i + 1]:
                return 0
        return flip(out_row, col_offset + rank_of(t, length, deg, g, index_map, map_offset), col_map)
    # Only cells (i, j) with s_j > 0 and r_i >= 2^j can be nonzero; the others stay 0 and are skipped.
    # State: rowrem[1..m] (x_i0), colrem[1..k] (x_0j), dor[1..m+k] (OR of each anti-diagonal's cells).
    base = 3 * MAX_LEN
    rowrem = scratch[base:base + MAX_LEN + 1]
    colrem = scratch[base + MAX_LEN + 1:base + 2 * MAX_LEN + 2]
    dor = scratch[base + 2 * MAX_LEN + 2:base + 4 * MAX_LEN + 3]
    cells = scratch[base + 4 * MAX_LEN + 3:base + 4 * MAX_LEN + 3 + MAX_LEN * MAX_LEN]
    x = scratch[base + 4 * MAX_LEN + 3 + MAX_LEN * MAX_LEN:]
    for i in range(1, m + 1):
        rowrem[i] = r[i - 1]
    for j in range(1, k + 1):
        colrem[j] = s[j - 1]
    for n in range(m + k + 1):
        dor[n] = 0
    # cells[c] packs (i, j, last active cell of its row, last active cell of its column).
    ncell = 0
    for i in range(1, m + 1):
        for j in range(1, k + 1):
            if s[j - 1] > 0 and (r[i - 1] >> j) > 0:
                cells[ncell] = (i << 8) | (j << 2)
                ncell += 1
    seen_rows = 0
    seen_cols = 0
    for c in range(ncell - 1, -1, -1):
        i = cells[c] >> 8
        j = (cells[c] >> 2) & 63
        if not (seen_rows >> i) & 1:
            cells[c] |= 2
            seen_rows |= 1 << i
        if not (seen_cols >> j) & 1:
            cells[c] |= 1
            seen_cols |= 1 << j
    flips = 0
    c = 0
    first = True
    while True:
        if c == ncell:
            ok = True
            tlen = 0
            for n in range(1, m + k + 1):
                a = rowrem[n] if n <= m else 0
                b = colrem[n] if n <= k else 0
                d = dor[n]
                if (a & (d | forbid[n])) != 0 or (b & (d | a | forbid[n])) != 0:
                    ok = False
                    break
                v = d | a | b
                t[n - 1] = v
                if v != 0:
                    tlen = n
            if ok:
                flips += flip(out_row, col_offset + rank_of(t, tlen, deg, g, index_map, map_offset), col_map)
            c -= 1
            first = False
            if c < 0:
                break
            continue
        cell = cells[c]
        i = cell >> 8
        j = (cell >> 2) & 63
        n = i + j
        if first:
            v = 0
        else:
            old = x[c]
            rowrem[i] += old << j
            colrem[j] += old
            dor[n] ^= old
            busy = dor[n] | forbid[n]
            v = ((old | busy) + 1) & ~busy
        placed = False
        while v <= colrem[j] and (v << j) <= rowrem[i]:
            rowrem[i] -= v << j
            colrem[j] -= v
            dor[n] |= v
            # Bits 0..j of x_i0 are final now (all of it after the row's last cell), and x_0j after the
            # column's last cell; anti-diagonals only gain bits, so a carry seen now never goes away.
            low = np.int64(-1) if cell & 2 else (np.int64(2) << j) - 1
            bad = rowrem[i] & (dor[i] | forbid[i]) & low
            if cell & 1:
                bad |= colrem[j] & (dor[j] | forbid[j])
            if bad != 0:
                rowrem[i] += v << j
                colrem[j] += v
                dor[n] ^= v
                busy = dor[n] | forbid[n]
                v = ((v | busy) + 1) & ~busy
                continue
            x[c] = v
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
    return flips
