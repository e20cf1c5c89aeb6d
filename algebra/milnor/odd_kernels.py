"""Compiled Milnor products at an odd prime, added mod p into dense uint8 rows (REFERENCE-ODD-PRIMES 2).

Q(E1) P(R) * Q(E2) P(S) in two stages. Stage A moves each Q_k of E2 left past P(R):
P(R) Q_k = Q_k P(R) + sum_i Q_{k+i} P(R - p^k e_i), and Q(E') Q_m = (-1)^{#(a in E', a > m)} Q(E' + m), the only
source of signs. Stage B multiplies the P-parts by Milnor matrices: weighted rows sum_j p^j x_ij = r_i, columns
sum_i x_ij = s_j, product P(T) with T_n the anti-diagonal sums and coefficient the product of the anti-diagonal
multinomials mod p (Lucas, digit by digit: any carry makes it 0). The enumeration is a depth-first odometer
over the interior cells; each product's index is found by binary search among its degree's sorted words.

A `keep` filter (signature_filter) drops the products of every signature but one before their coefficient and index
are found: Stage A's terms by their Q-part, Stage B's matrices by T's residues (Nassau's signature blocks).
"""
from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np
from numba import njit

from algebra.milnor.table_layout import append, table_starts

MAX_TERMS = 1024
MAX_P_LEN = 12


@lru_cache(maxsize=None)
def binomial_table(p: int) -> np.ndarray:
    """C(a, b) mod p for 0 <= a, b < p."""
    table = np.zeros((p, p), dtype=np.int64)
    for a in range(p):
        table[a, 0] = 1
        for b in range(1, a + 1):
            table[a, b] = (table[a - 1, b - 1] + (table[a - 1, b] if b < a else 0)) % p
    return table


@njit(cache=True, nogil=True, inline="always")
def _unpack(word, shifts, masks, out):
    n = 0
    for i in range(shifts.shape[0]):
        v = np.int64((word >> np.uint64(shifts[i])) & np.uint64(masks[i]))
        out[i] = v
        if v != 0:
            n = i + 1
    return n


@njit(cache=True, nogil=True)
def _multinomial(vals, count, p, binom):
    """multinomial(vals[0..count)) mod p by Lucas; 0 as soon as a digit position carries (vals is consumed)."""
    coef = 1
    while True:
        total = 0
        nonzero = False
        for k in range(count):
            d = vals[k] % p
            if vals[k] != 0:
                nonzero = True
            if d:
                total += d
                if total >= p:
                    return 0
                coef = coef * binom[total, d] % p
            vals[k] //= p
        if not nonzero:
            return coef


@njit(cache=True, nogil=True)
def index_of(word, deg, sorted_words, sorted_index, offsets):
    """The basis index of a packed word in its degree (-1: not in the basis), by binary search."""
    lo, hi = offsets[deg], offsets[deg + 1]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_words[mid] < word:
            lo = mid + 1
        else:
            hi = mid
    if lo == offsets[deg + 1] or sorted_words[lo] != word:
        return -1
    return sorted_index[lo]


def signature_filter(nlen: int, q_mask: int = 0, q_want: int = 0, moduli: tuple[int, ...] = (),
                     wants: tuple[int, ...] = ()) -> np.ndarray:
    """The products kept: E & q_mask == q_want and t_i mod moduli[i] == wants[i] (the default keeps every product).
    Layout: q_mask, q_want, then nlen moduli (1: any) and nlen residues."""
    out = np.zeros(2 + 2 * nlen, dtype=np.int64)
    out[0], out[1] = q_mask, q_want
    out[2:2 + nlen] = 1
    for i, (m, w) in enumerate(zip(moduli, wants)):
        out[2 + i], out[2 + nlen + i] = m, w
    return out


_THREAD = threading.local()


def workspace(nlen: int) -> tuple:
    """Scratch arrays for odd_product_into, one set per thread and length (allocating them per product costs
    more than the product)."""
    cached = getattr(_THREAD, "spaces", None)
    if cached is None:
        cached = _THREAD.spaces = {}
    if nlen not in cached:
        cached[nlen] = _allocate(nlen)
    return cached[nlen]


def _allocate(nlen: int) -> tuple:
    return (np.zeros(MAX_TERMS, dtype=np.int64), np.zeros(MAX_TERMS, dtype=np.int64),
            np.zeros((MAX_TERMS, nlen + 1), dtype=np.int64), np.zeros(MAX_TERMS, dtype=np.int64),
            np.zeros(MAX_TERMS, dtype=np.int64), np.zeros((MAX_TERMS, nlen + 1), dtype=np.int64),
            np.zeros(nlen + 1, dtype=np.int64), np.zeros(nlen + 1, dtype=np.int64),
            np.zeros((nlen + 2, nlen + 2), dtype=np.int64), np.zeros(nlen + 2, dtype=np.int64),
            np.zeros(nlen + 2, dtype=np.int64), np.zeros((nlen + 1) * (nlen + 1), dtype=np.int64),
            np.zeros(2 * nlen + 2, dtype=np.int64), np.zeros(2 * nlen + 2, dtype=np.int64))


@njit(cache=True, nogil=True)
def odd_product_into(out, row, col0, coef, rw, sw, deg, p, q_bits, shifts, masks, sorted_words, sorted_index,
                     offsets, binom, col_map, ws, keep):
    """out[row, col0 + index(T)] += coef * (Q(E1)P(R) * Q(E2)P(S))_T mod p for every term T the filter `keep`
    (signature_filter) keeps; returns the terms enumerated. ws: workspace(len(shifts))."""
    t_c, t_e, t_r, n_c, n_e, n_r, r, s, x, rem_row, rem_col, val, diag, tvec = ws
    nlen = shifts.shape[0]
    qmask = np.uint64((1 << q_bits) - 1)
    e1 = np.int64(rw & qmask)
    e2 = np.int64(sw & qmask)
    _unpack(rw, shifts, masks, r)
    n = _unpack(sw, shifts, masks, s)
    # Stage A: terms (c, E, R) of Q(E1) P(R) Q(E2).
    count = 1
    t_c[0] = 1
    t_e[0] = e1
    t_r[0, :] = r
    pk = 1
    for k in range(q_bits):
        if k:
            pk *= p
        if not (e2 >> k) & 1:
            continue
        made = 0
        for a in range(count):
            rlen = 0
            for i in range(nlen):
                if t_r[a, i] != 0:
                    rlen = i + 1
            for i in range(rlen + 1):
                m = k + i
                if m >= q_bits or (t_e[a] >> m) & 1:
                    continue
                if i >= 1 and t_r[a, i - 1] < pk:
                    continue
                above = 0
                rest = t_e[a] >> (m + 1)
                while rest:
                    above += rest & 1
                    rest >>= 1
                if made == MAX_TERMS:
                    raise ValueError("too many terms in an odd-prime product")
                n_c[made] = t_c[a] * (p - 1) % p if above & 1 else t_c[a]
                n_e[made] = t_e[a] | (1 << m)
                n_r[made, :] = t_r[a, :]
                if i >= 1:
                    n_r[made, i - 1] -= pk
                made += 1
        count = made
        t_c[:count] = n_c[:count]
        t_e[:count] = n_e[:count]
        t_r[:count, :] = n_r[:count, :]
    # Stage B: each term's P-part times P(S) by Milnor matrices.
    terms = 0
    for a in range(count):
        if t_c[a] == 0 or (t_e[a] & keep[0]) != keep[1]:
            continue
        m = 0
        for i in range(nlen):
            if t_r[a, i] != 0:
                m = i + 1
        for i in range(1, m + 1):
            rem_row[i] = t_r[a, i - 1]
        for j in range(1, n + 1):
            rem_col[j] = s[j - 1]
        cells = m * n
        level = 0
        if cells:
            val[0] = -1
        while True:
            if cells:
                i = level // n + 1
                j = level % n + 1
                if val[level] >= 0:
                    rem_row[i] += pk_table(p, j) * val[level]
                    rem_col[j] += val[level]
                val[level] += 1
                top = min(rem_row[i] // pk_table(p, j), rem_col[j])
                if val[level] > top:
                    val[level] = -1
                    x[i, j] = 0
                    if level == 0:
                        break
                    level -= 1
                    continue
                x[i, j] = val[level]
                rem_row[i] -= pk_table(p, j) * val[level]
                rem_col[j] -= val[level]
                if level < cells - 1:
                    level += 1
                    val[level] = -1
                    continue
            # A complete matrix: T_d = sum of anti-diagonal d, coefficient = product of multinomials.
            b = t_c[a] * coef % p
            tlen = 0
            kept = True
            for d in range(1, max(nlen, m + n) + 1):
                total = 0
                if d <= m + n:
                    for i2 in range(max(0, d - n), min(d, m) + 1):
                        j2 = d - i2
                        total += rem_row[i2] if j2 == 0 else (rem_col[j2] if i2 == 0 else x[i2, j2])
                tvec[d - 1] = total
                if total:
                    tlen = d
                if d <= nlen and total % keep[1 + d] != keep[1 + nlen + d]:
                    kept = False
                    break
            if kept:
                for d in range(1, tlen + 1):
                    if tvec[d - 1] == 0:
                        continue
                    cnt = 0
                    for i2 in range(max(0, d - n), min(d, m) + 1):
                        j2 = d - i2
                        diag[cnt] = rem_row[i2] if j2 == 0 else (rem_col[j2] if i2 == 0 else x[i2, j2])
                        cnt += 1
                    b = b * _multinomial(diag, cnt, p, binom) % p
                    if b == 0:
                        break
            if kept and b != 0:
                word = np.uint64(t_e[a])
                for d in range(tlen):
                    word |= np.uint64(tvec[d]) << np.uint64(shifts[d])
                idx = index_of(word, deg, sorted_words, sorted_index, offsets)
                if idx < 0:
                    raise ValueError("an odd-prime product left the algebra's basis")
                col = col0 + idx
                if col_map.shape[0] > 0:
                    col = col_map[col]
                if col >= 0:
                    out[row, col] = (out[row, col] + b) % p
                terms += 1
            if not cells:
                break
    return terms


@njit(cache=True, nogil=True, inline="always")
def pk_table(p, j):
    """p^j."""
    v = 1
    for _ in range(j):
        v *= p
    return v


def coef_bits(p: int) -> int:
    """Bits a product table's entry gives its coefficient at the prime p (1..p-1 stored as c - 1; none at p = 2):
    an entry is a 16-bit rank T | (c - 1) << (16 - coef_bits), so at odd p the tables hold degrees of at most
    2^(16 - coef_bits) elements (8192 at p = 7)."""
    return 0 if p == 2 else (p - 2).bit_length()


@njit(cache=True, nogil=True)
def _word_degree(word, q_bits, tau, shifts, masks, xi):
    d = 0
    for k in range(q_bits):
        if (word >> np.uint64(k)) & np.uint64(1):
            d += tau[k]
    for i in range(shifts.shape[0]):
        d += np.int64((word >> np.uint64(shifts[i])) & np.uint64(masks[i])) * xi[i]
    return d


@njit(cache=True, nogil=True)
def fill_odd_tables(keys_s, keys_n, flat, flat_offset, p, q_bits, tau, xi, shifts, masks, sorted_words,
                    sorted_index, binom, ws, keep_all, rank_bits):
    """The product tables of these keys (S, deg R) at an odd prime, as product_tables._fill lays them out: for each
    basis element x of degree n in basis order, the entries T | (c - 1) << rank_bits of the terms c T of x * S,
    T ascending. Each product is enumerated once (odd_product_into; keep_all: signature_filter's default) into one
    dense scratch row, read back 8 columns at a time. Returns where each key's row offsets and entries start, the
    offsets (local to each table) and the entries."""
    nkeys = keys_s.shape[0]
    row_start, row_off, res_start, ranks = table_starts(keys_n, flat_offset)
    no_map = np.zeros(0, dtype=np.int64)
    used = 0
    for j in range(nkeys):
        n = keys_n[j]
        s = keys_s[j]
        d = n + _word_degree(s, q_bits, tau, shifts, masks, xi)
        nw = max(1, (flat_offset[d + 1] - flat_offset[d] + 7) >> 3)
        words = np.zeros(nw, dtype=np.uint64)
        row = words.view(np.uint8).reshape((1, 8 * nw))
        first = used
        base = row_start[j]
        dim_n = row_start[j + 1] - base - 1
        for r in range(dim_n):
            row_off[base + r] = used - first
            odd_product_into(row, 0, 0, 1, flat[flat_offset[n] + r], s, d, p, q_bits, shifts, masks, sorted_words,
                             sorted_index, flat_offset, binom, no_map, ws, keep_all)
            for w in range(nw):
                if words[w] == 0:
                    continue
                for b in range(8):
                    c = row[0, 8 * w + b]
                    if c == 0:
                        continue
                    ranks, used = append(ranks, used, (8 * w + b) | ((c - 1) << rank_bits))
                words[w] = 0
        row_off[base + dim_n] = used - first
        res_start[j + 1] = used
    return row_start, res_start, row_off, ranks[:used]
