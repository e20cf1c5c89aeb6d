"""The secondary Steenrod algebra at p = 2 as a split pair algebra (REFERENCE-SECONDARY 1-2; Baues, Nassau, Chua).

A degree-d element of B_0 is a Z/4-combination of lifted Milnor basis elements sigma(Sq R) plus a Y-part,
sum over k < l of Y_{k,l} times an element of A_{d + 1 - 2^k - 2^l} (mod 2). Two operations are needed:
- sigma(Sq R) sigma(Sq S): the Milnor matrices with coefficient the product of the anti-diagonal multinomials
  mod 4, plus Y-terms Y_{m+k, n+k} Sq(R - 2^k e_n - 2^k e_m) Sq(S - e_{k+1});
- A(r, x) in A for r in A and x in the kernel (even Z/4 part): Sq(R - e_1) twos(x) plus the sum of
  A(Sq R, Y_{k,l}) ys_{k,l}(x), with A(Sq R, Y_{k,l}) = sum_{i,j} Sq(e_{k+i} + e_{l+j}) Sq(R - 2^k e_i - 2^l e_j).
Vectors are dense uint8 over the Milnor basis of their degree; e_0 means "subtract nothing".
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numba import njit

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.kernels import product_into, rank_of, unpack_into
from algebra.milnor.ppart import FIELD_SHIFT, MAX_LEN, degree, pack, trimmed
from algebra.milnor.product_tables import run_end
from algebra.milnor.products import multiply
from fp.bits import ctz, popcount

#: Largest n of the binomial table mod 4 (degrees of the secondary computations stay far below).
BINOM_MAX = 1024
_SHIFT = FIELD_SHIFT.copy()


@lru_cache(maxsize=None)
def binomials_mod4() -> np.ndarray:
    """C(n, k) mod 4 for 0 <= k <= n < BINOM_MAX."""
    table = np.zeros((BINOM_MAX, BINOM_MAX), dtype=np.uint8)
    table[0, 0] = 1
    for n in range(1, BINOM_MAX):
        table[n, 0] = 1
        table[n, 1:n + 1] = (table[n - 1, 1:n + 1] + table[n - 1, 0:n]) % 4
    return table


@njit(cache=True, nogil=True)
def z4_workspace():
    """Scratch for z4_product (and its twin), allocated once per batch."""
    cells = (MAX_LEN + 1) * (MAX_LEN + 1)
    return (np.zeros(MAX_LEN + 1, dtype=np.int64), np.zeros(MAX_LEN + 1, dtype=np.int64),
            np.zeros(MAX_LEN + 2, dtype=np.int64), np.zeros(MAX_LEN + 2, dtype=np.int64),
            np.zeros((MAX_LEN + 2, MAX_LEN + 2), dtype=np.int64), np.zeros(cells, dtype=np.int64),
            np.zeros(2 * MAX_LEN + 2, dtype=np.int64), np.zeros(2 * MAX_LEN + 2, dtype=np.int64),
            np.zeros(cells, dtype=np.int64), np.zeros(cells, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def _carries(a, b):
    """Carries in adding a and b in base 2: the 2-adic valuation of C(a + b, a) (Kummer)."""
    return popcount(a) + popcount(b) - popcount(a + b)


@njit(cache=True, nogil=True, inline="always")
def _matrix_sums(m, k, rem_row, rem_col, x, t):
    """T of a Milnor matrix (x with first column rem_row, first row rem_col) into t: its anti-diagonal sums; returns
    T's length and the parity of the adjacent bit pairs of the sums that come from different entries.

    That parity is the sign of a matrix without carries: each binomial C(a + b, a) with a & b = 0 of its
    multinomials is (-1)^(pc(a & b >> 1) + pc(b & a >> 1)) mod 4 (Davis-Webb), so their product is -1 to the adjacent
    pairs of the sums less those inside each entry. With one carry the coefficient is 2 whatever the sign: the pruned
    enumeration reads no binomial table (a fifth of its time)."""
    tlen = 0
    split = 0
    for d in range(1, m + k + 1):
        total = 0
        for i2 in range(max(0, d - k), min(d, m) + 1):
            j2 = d - i2
            v = rem_row[i2] if j2 == 0 else (rem_col[j2] if i2 == 0 else x[i2, j2])
            total += v
            split += popcount(v & (v >> 1))
        t[d - 1] = total
        if total:
            tlen = d
            split += popcount(total & (total >> 1))
    return tlen, split & 1


@njit(cache=True, nogil=True, inline="always")
def _binomial_coefficient(m, k, rem_row, rem_col, x, binom, partial):
    """The matrix's coefficient mod 4 as the product of its anti-diagonals' multinomials, from the binomial table (the
    twin's way): entries taken row by row, each C(its anti-diagonal's partial sum, entry). partial: scratch."""
    partial[:m + k + 1] = 0
    coef = 1
    for i in range(m + 1):
        for j in range(k + 1):
            if i or j:
                v = rem_row[i] if j == 0 else (rem_col[j] if i == 0 else x[i, j])
                partial[i + j] += v
                coef = coef * binom[partial[i + j], v] % 4
                if coef == 0:
                    return 0
    return coef


@njit(cache=True, nogil=True, inline="always")
def _add_term(t, tlen, deg, g, index_map, map_offset, coef, out, hits):
    """out[index(T)] += coef mod 4. A nonempty `hits` lists (after its count, hits[0]) each index it makes nonzero,
    so that a caller reads back a product without scanning the whole degree."""
    idx = rank_of(t, tlen, deg, g, index_map, map_offset, 0)
    if hits.shape[0] and out[idx] == 0 and hits[0] >= 0:
        if hits[0] + 1 < hits.shape[0]:
            hits[0] += 1
            hits[hits[0]] = idx
        else:
            hits[0] = -1  # full (an index that went back to 0 is listed again): the caller scans the degree
    out[idx] = (out[idx] + coef) % 4


@njit(cache=True, nogil=True)
def z4_product(r_word, s_word, deg, g, index_map, map_offset, out, ws, hits):
    """out[index(T)] += coefficient of Sq(T) in sigma(Sq R) sigma(Sq S), mod 4; returns how many Milnor matrices
    it reached (`hits` as in _add_term: empty for none).

    A matrix's coefficient has 2-adic valuation the number of carries in adding up each anti-diagonal (Kummer), and
    carries only accumulate as entries join their anti-diagonals: a partial matrix with two carries has no
    completion that is nonzero mod 4, and is cut there. Cells are placed in row order, values from 0 up; the first
    column's entry x_i0 (what is left of r_i) joins after its row's last cell, the first row's x_0j (what is left of
    s_j) after its column's last cell. z4_product_all, which reaches every matrix, is the twin."""
    r, s, rem_row, rem_col, x, val, t, dsum, cells, carry_at = ws
    m = unpack_into(r_word, r, 0)
    k = unpack_into(s_word, s, 0)
    ncell = 0
    for i in range(1, m + 1):
        rem_row[i] = r[i - 1]
        for j in range(1, k + 1):
            x[i, j] = 0
            if s[j - 1] > 0 and (r[i - 1] >> j) > 0:  # the other cells can only be 0
                cells[ncell] = (i << 8) | (j << 2)
                ncell += 1
    for j in range(1, k + 1):
        rem_col[j] = s[j - 1]
    seen_rows = 0
    seen_cols = 0
    for c in range(ncell - 1, -1, -1):
        i, j = cells[c] >> 8, (cells[c] >> 2) & 63
        if not (seen_rows >> i) & 1:
            cells[c] |= 1  # the last cell of its row
            seen_rows |= 1 << i
        if not (seen_cols >> j) & 1:
            cells[c] |= 2  # the last cell of its column
            seen_cols |= 1 << j
    for n in range(m + k + 1):
        dsum[n] = 0
    carries = 0  # a row or column without cells has its x_i0 = r_i or x_0j = s_j from the start
    for i in range(1, m + 1):
        if not (seen_rows >> i) & 1:
            carries += _carries(dsum[i], r[i - 1])
            dsum[i] += r[i - 1]
    for j in range(1, k + 1):
        if not (seen_cols >> j) & 1:
            carries += _carries(dsum[j], s[j - 1])
            dsum[j] += s[j - 1]
    if carries >= 2:
        return 0
    reached = 0
    c = 0
    start = 0
    while True:
        if c == ncell:
            reached += 1
            tlen, sign = _matrix_sums(m, k, rem_row, rem_col, x, t)
            _add_term(t, tlen, deg, g, index_map, map_offset, 2 if carries else 1 + 2 * sign, out, hits)
            if ncell == 0:
                break
            c -= 1
            start = -1  # resume cell c after its current value
        cell = cells[c]
        i, j = cell >> 8, (cell >> 2) & 63
        n = i + j
        if start < 0:  # take back cell c's value (and the first row's and column's entries it made final)
            v = val[c]
            if cell & 2:
                dsum[j] -= rem_col[j]
            if cell & 1:
                dsum[i] -= rem_row[i]
            rem_row[i] += v << j
            rem_col[j] += v
            dsum[n] -= v
            x[i, j] = 0
            carries = carry_at[c]
            start = v + 1
        top = min(rem_col[j], rem_row[i] >> j)
        v = start
        more = 0
        while v <= top:
            more = _carries(dsum[n], v)  # then x_i0 and x_0j as they become final (anti-diagonals i, j < n)
            xi = rem_row[i] - (v << j)
            if carries + more < 2 and cell & 1:
                more += _carries(dsum[i], xi)
            if carries + more < 2 and cell & 2:
                more += _carries(dsum[j] + (xi if (cell & 1) and i == j else 0), rem_col[j] - v)
            if carries + more < 2:
                break
            v += 1
        if v <= top:
            carry_at[c] = carries
            carries += more
            val[c] = v
            x[i, j] = v
            rem_row[i] -= v << j
            rem_col[j] -= v
            dsum[n] += v
            if cell & 1:
                dsum[i] += rem_row[i]
            if cell & 2:
                dsum[j] += rem_col[j]
            c += 1
            start = 0
        else:
            if c == 0:
                break
            c -= 1
            start = -1
    return reached


@njit(cache=True, nogil=True)
def z4_product_all(r_word, s_word, deg, g, index_map, map_offset, binom, out, ws):
    """out[index(T)] += coefficient of Sq(T) in sigma(Sq R) sigma(Sq S), mod 4, for every Milnor matrix; returns how
    many matrices it reached (all of them): the twin of z4_product."""
    r, s, rem_row, rem_col, x, val, t, partial = ws[:8]
    m = unpack_into(r_word, r, 0)
    k = unpack_into(s_word, s, 0)
    for i in range(1, m + 1):
        rem_row[i] = r[i - 1]
    for j in range(1, k + 1):
        rem_col[j] = s[j - 1]
    cells = m * k
    level = 0
    if cells:
        val[0] = -1
    reached = 0
    while True:
        if cells:
            i = level // k + 1
            j = level % k + 1
            if val[level] >= 0:
                rem_row[i] += val[level] << j
                rem_col[j] += val[level]
            val[level] += 1
            if val[level] > min(rem_row[i] >> j, rem_col[j]):
                val[level] = -1
                x[i, j] = 0
                if level == 0:
                    break
                level -= 1
                continue
            x[i, j] = val[level]
            rem_row[i] -= val[level] << j
            rem_col[j] -= val[level]
            if level < cells - 1:
                level += 1
                val[level] = -1
                continue
        reached += 1
        coef = _binomial_coefficient(m, k, rem_row, rem_col, x, binom, partial)
        if coef:
            tlen, _ = _matrix_sums(m, k, rem_row, rem_col, x, t)
            _add_term(t, tlen, deg, g, index_map, map_offset, coef, out, t[:0])
        if not cells:
            break
    return reached


@dataclass
class Element:
    """A degree-d element of B_0: z4 (int64 mod 4 over A_d) and Y-parts {(k, l): uint8 over A_{d+1-2^k-2^l}}."""

    degree: int
    z4: np.ndarray
    ys: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    def add(self, other: "Element", coef: int = 1) -> None:
        self.z4 = (self.z4 + coef * other.z4) % 4
        if coef % 2:
            for key, v in other.ys.items():
                self.ys[key] = self.ys[key] ^ v if key in self.ys else v.copy()

    @property
    def is_kernel(self) -> bool:
        """Whether it maps to 0 in A (every Z/4 coefficient even)."""
        return not (self.z4 % 2).any()

    @property
    def twos(self) -> np.ndarray:
        return (self.z4 // 2 % 2).astype(np.uint8)


class PairAlgebra:
    """Products of the pair algebra over the Milnor basis (A only; the reference has no profiles here)."""

    def __init__(self, basis: MilnorBasis) -> None:
        if basis.prime != 2 or not basis.profile.is_full:
            raise ValueError("the secondary Steenrod algebra is implemented over the whole mod-2 algebra only")
        self.basis = basis
        self._lock = threading.Lock()
        self._ay: dict[tuple[tuple[int, ...], int, int], np.ndarray] = {}

    def zero(self, d: int) -> Element:
        return Element(d, np.zeros(self.basis.dimension(d), dtype=np.int64))

    def _mod2(self, r: tuple[int, ...], s: tuple[int, ...]) -> np.ndarray:
        return multiply(self.basis, r, s).astype(np.uint8)

    def sigma_product(self, r: tuple[int, ...], s: tuple[int, ...]) -> Element:
        """sigma(Sq R) sigma(Sq S) (REFERENCE-SECONDARY 2.2), its Z/4 part from every Milnor matrix (the twin)."""
        b = self.basis
        d = degree(r) + degree(s)
        b.extend(d + 1)
        out = self.zero(d)
        z4_product_all(np.uint64(pack(r)), np.uint64(pack(s)), d, b.rank_g, b.index_map, b.index_map_offset,
                       binomials_mod4(), out.z4, z4_workspace())
        rr = list(r)
        for k in range(len(s)):
            if s[k] < 1:
                continue
            s_less = list(s)
            s_less[k] -= 1
            for n in range(1, len(rr) + 1):
                if rr[n - 1] < (1 << k):
                    continue
                for m in range(0, n):
                    if m and rr[m - 1] < (1 << k):
                        continue
                    left = list(rr)
                    left[n - 1] -= 1 << k
                    if m:
                        left[m - 1] -= 1 << k
                    vec = self._mod2(trimmed(left), trimmed(s_less))
                    key = (m + k, n + k)
                    out.ys[key] = out.ys[key] ^ vec if key in out.ys else vec
        return out

    def a_y(self, r: tuple[int, ...], k: int, l: int) -> np.ndarray:
        """A(Sq R, Y_{k,l}) in A of degree |R| + 2^k + 2^l - 2 (memoised)."""
        key = (r, k, l)
        with self._lock:
            hit = self._ay.get(key)
        if hit is not None:
            return hit
        d = degree(r) + (1 << k) + (1 << l) - 2
        out = np.zeros(self.basis.dimension(d), dtype=np.uint8)
        for i in range(1, len(r) + 1):
            if i + k < l or r[i - 1] < (1 << k):
                continue
            after_i = list(r)
            after_i[i - 1] -= 1 << k
            for j in range(0, min(i + k - l, len(r)) + 1):
                rest = list(after_i)
                if j:
                    if rest[j - 1] < (1 << l):
                        continue
                    rest[j - 1] -= 1 << l
                left = [0] * (max(k + i, l + j))
                left[k + i - 1] += 1
                left[l + j - 1] += 1
                out ^= self._mod2(trimmed(left), trimmed(rest))
        with self._lock:
            self._ay[key] = out
        return out

    def a_multiply(self, r: tuple[int, ...], x: Element) -> np.ndarray:
        """A(Sq R, x) for a kernel element x: an element of A of degree |R| + |x| - 1 (REFERENCE-SECONDARY 2.3)."""
        d = degree(r) + x.degree - 1
        out = np.zeros(self.basis.dimension(d), dtype=np.uint8)
        if not r:
            return out
        b = self.basis
        if r[0] >= 1:
            less = trimmed((r[0] - 1,) + tuple(r[1:]))
            for idx in np.nonzero(x.twos)[0]:
                out ^= self._mod2(less, b.element(x.degree, int(idx)))
        for (k, l), vec in x.ys.items():
            if not vec.any():
                continue
            ay = self.a_y(tuple(r), k, l)
            if not ay.any():
                continue
            ay_deg = degree(r) + (1 << k) + (1 << l) - 2
            v_deg = x.degree + 1 - (1 << k) - (1 << l)
            for i in np.nonzero(ay)[0]:
                for j in np.nonzero(vec)[0]:
                    out ^= self._mod2(b.element(ay_deg, int(i)), b.element(v_deg, int(j)))
        return out


# -- batches: the same products for many rows in one compiled call -------------------------------------------
@njit(cache=True, nogil=True)
def z4_batch(out, row_r, row_deg, row_terms, term_start, term_s, term_sdeg, term_col, g, index_map, map_offset,
             binom):
    """out[i, term_col + index(T)] += the Z/4 coefficient of Sq(T) in sigma(row_r[i]) sigma(term_s), for every
    term of row i's list (out: int8 rows, values kept mod 4), reaching every Milnor matrix: the twin of the kept
    products (algebra.secondary.z4_memo), which enumerate with z4_product."""
    ws = z4_workspace()
    for i in range(row_r.shape[0]):
        lst = row_terms[i]
        for q in range(term_start[lst], term_start[lst + 1]):
            z4_product_all(row_r[i], term_s[q], row_deg[i] + term_sdeg[q], g, index_map, map_offset, binom,
                           out[i, term_col[q]:], ws)


@njit(cache=True, nogil=True)
def y_products(row_r, row_deg, row_terms, term_start, term_s, term_sdeg, key_col, key_of):
    """The Milnor products behind the Y-parts of sigma(row_r[i]) sigma(term_s), as an algebra.milnor.products batch: the
    product Sq(R - 2^k e_n - 2^k e_m) Sq(S - e_{k+1}) goes to key (m + k, n + k), at column key_col[term, key]
    (-1: the block is empty there; key_of[a, b] numbers the keys, a < b).

    Each (term, k, n, m) is a one-term list, and the rows i of a run (equal term list and degree) that have such a
    product come one after the other: they share the list and the degree of their left factor, so the batch kernel
    finds that product table once for all of them (one lookup per product made the d2 lift of S_2 through stem 70
    look up 11 million keys). Returns per product its row i, left factor, its degree and its list; per list the
    right factor, its degree and its column."""
    rs = np.zeros((row_r.shape[0], MAX_LEN + 1), dtype=np.int64)
    lens = np.empty(row_r.shape[0], dtype=np.int64)
    for i in range(row_r.shape[0]):
        lens[i] = unpack_into(row_r[i], rs[i], 0)
    s = np.zeros(MAX_LEN + 1, dtype=np.int64)
    count = 0
    nlists = 0
    for sweep in range(2):  # count, then fill
        if sweep:
            rows = np.empty(count, dtype=np.int64)
            lefts = np.empty(count, dtype=np.uint64)
            left_deg = np.empty(count, dtype=np.int64)
            lists = np.empty(count, dtype=np.int64)
            rights = np.empty(nlists, dtype=np.uint64)
            right_deg = np.empty(nlists, dtype=np.int64)
            cols = np.empty(nlists, dtype=np.int64)
            count = 0
            nlists = 0
        i0 = 0
        while i0 < row_r.shape[0]:
            i1 = run_end(row_terms, row_deg, i0)
            top = 0
            for i in range(i0, i1):
                top = max(top, lens[i])
            lst = row_terms[i0]
            for q in range(term_start[lst], term_start[lst + 1]):
                k_len = unpack_into(term_s[q], s, 0)
                for k in range(k_len):
                    if s[k] < 1:
                        continue
                    unit = 1 << k
                    for n in range(1, top + 1):
                        for m in range(n):
                            col = key_col[q, key_of[m + k, n + k]]
                            if col < 0:
                                continue
                            first = count
                            for i in range(i0, i1):
                                if n > lens[i] or rs[i, n - 1] < unit or (m and rs[i, m - 1] < unit):
                                    continue
                                if sweep:
                                    left = np.uint64(row_r[i]) - (np.uint64(unit) << np.uint64(_SHIFT[n - 1]))
                                    drop = ((1 << n) - 1) << k
                                    if m:
                                        left -= np.uint64(unit) << np.uint64(_SHIFT[m - 1])
                                        drop += ((1 << m) - 1) << k
                                    rows[count] = i
                                    lefts[count] = left
                                    left_deg[count] = row_deg[i] - drop
                                    lists[count] = nlists
                                count += 1
                            if count > first:
                                if sweep:
                                    rights[nlists] = np.uint64(term_s[q]) - (np.uint64(1) << np.uint64(_SHIFT[k]))
                                    right_deg[nlists] = term_sdeg[q] - ((2 << k) - 1)
                                    cols[nlists] = col
                                nlists += 1
            i0 = i1
    return rows, lefts, left_deg, lists, rights, right_deg, cols


@njit(cache=True, nogil=True)
def a_y_batch(out, r_words, r_degs, ks, ls, g, index_map, map_offset, scratch):
    """Row n of `out` (packed) = A(Sq R_n, Y_{k_n, l_n}) = sum over i, j of Sq(e_{k+i} + e_{l+j}) Sq(R - 2^k e_i - 2^l e_j)
    (REFERENCE-SECONDARY 2.3; the twin is PairAlgebra.a_y)."""
    r = np.zeros(MAX_LEN + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    forbid = np.zeros(2 * MAX_LEN + 1, dtype=np.int64)
    for n in range(r_words.shape[0]):
        length = unpack_into(r_words[n], r, 0)
        k, l = ks[n], ls[n]
        deg = r_degs[n] + (1 << k) + (1 << l) - 2
        for i in range(max(1, l - k), length + 1):
            if r[i - 1] < (1 << k):
                continue
            after_i = np.uint64(r_words[n]) - (np.uint64(1 << k) << np.uint64(_SHIFT[i - 1]))
            for j in range(0, min(i + k - l, length) + 1):
                rest = after_i
                if j:
                    entry = r[j - 1] - ((1 << k) if j == i else 0)
                    if entry < (1 << l):
                        continue
                    rest -= np.uint64(1 << l) << np.uint64(_SHIFT[j - 1])
                left = (np.uint64(1) << np.uint64(_SHIFT[k + i - 1])) + (np.uint64(1) << np.uint64(_SHIFT[l + j - 1]))
                product_into(out, n, 0, left, rest, deg, g, index_map, map_offset, empty, forbid, scratch)


@njit(cache=True, nogil=True)
def row_words(bits, degs, flat, flat_offset):
    """The basis words of the set bits of each packed row of bits (row i over the basis of degree degs[i]), rows in
    order, and which row each came from (numpy's nonzero of the unpacked rows took 4% of the d2 lift)."""
    count = 0
    for i in range(bits.shape[0]):
        for w in range(bits.shape[1]):
            count += popcount(bits[i, w])
    out = np.empty(count, dtype=np.uint64)
    owner = np.empty(count, dtype=np.int64)
    count = 0
    for i in range(bits.shape[0]):
        base = flat_offset[degs[i]]
        for w in range(bits.shape[1]):
            x = bits[i, w]
            while x != 0:
                out[count] = flat[base + w * 64 + ctz(x)]
                owner[count] = i
                count += 1
                x &= x - np.uint64(1)
    return out, owner


@njit(cache=True, nogil=True)
def add_incidence_sums(totals, incidence, rows, coef) -> None:
    """totals[g] = (totals[g] + coef * the sum of rows[j] over the j with incidence[g, j]) mod 4: the composites of
    generators from their middle rows' products (an int64 matrix product, which numpy does without BLAS, was 7% of
    the d2 lift)."""
    for g in range(incidence.shape[0]):
        for j in range(incidence.shape[1]):
            if incidence[g, j]:
                for c in range(rows.shape[1]):
                    totals[g, c] = (totals[g, c] + coef * rows[j, c]) & 3
