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

from algebra.milnor_basis import MilnorBasis
from algebra.milnor_kernels import rank_of, unpack_into
from algebra.ppart import MAX_LEN, degree, pack
from algebra.products import multiply

#: Largest n of the binomial table mod 4 (degrees of the secondary computations stay far below).
BINOM_MAX = 1024


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
def _z4_product(r_word, s_word, deg, g, index_map, map_offset, binom, out):
    """out[index(T)] += coefficient of Sq(T) in sigma(Sq R) sigma(Sq S), mod 4, for every Milnor matrix."""
    sc = np.zeros(4 * MAX_LEN + 4, dtype=np.int64)
    r = np.zeros(MAX_LEN + 1, dtype=np.int64)
    s = np.zeros(MAX_LEN + 1, dtype=np.int64)
    m = unpack_into(r_word, r, 0)
    k = unpack_into(s_word, s, 0)
    rem_row = np.zeros(MAX_LEN + 2, dtype=np.int64)
    rem_col = np.zeros(MAX_LEN + 2, dtype=np.int64)
    x = np.zeros((MAX_LEN + 2, MAX_LEN + 2), dtype=np.int64)
    val = np.zeros((MAX_LEN + 1) * (MAX_LEN + 1), dtype=np.int64)
    t = np.zeros(2 * MAX_LEN + 2, dtype=np.int64)
    for i in range(1, m + 1):
        rem_row[i] = r[i - 1]
    for j in range(1, k + 1):
        rem_col[j] = s[j - 1]
    cells = m * k
    level = 0
    if cells:
        val[0] = -1
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
        coef = 1
        tlen = 0
        for d in range(1, m + k + 1):
            total = 0
            for i2 in range(max(0, d - k), min(d, m) + 1):
                j2 = d - i2
                v = rem_row[i2] if j2 == 0 else (rem_col[j2] if i2 == 0 else x[i2, j2])
                total += v
                coef = coef * binom[total, v] % 4
            t[d - 1] = total
            if total:
                tlen = d
            if coef == 0:
                break
        if coef:
            idx = rank_of(t, tlen, deg, g, index_map, map_offset, 0)
            out[idx] = (out[idx] + coef) % 4
        if not cells:
            break
    return sc[0]


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
        """sigma(Sq R) sigma(Sq S) (REFERENCE-SECONDARY 2.2)."""
        b = self.basis
        d = degree(r) + degree(s)
        b.extend(d + 1)
        out = self.zero(d)
        _z4_product(np.uint64(pack(r)), np.uint64(pack(s)), d, b.rank_g, b.index_map, b.index_map_offset,
                    binomials_mod4(), out.z4)
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
                    vec = self._mod2(_trim(left), _trim(s_less))
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
                out ^= self._mod2(_trim(left), _trim(rest))
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
            less = _trim((r[0] - 1,) + tuple(r[1:]))
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


def _trim(r: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    r = list(r)
    while r and r[-1] == 0:
        r.pop()
    return tuple(r)
