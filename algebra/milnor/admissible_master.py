"""The admissible-matrix form of Milnor products and its cache (the host-side "admissible master").

For a fixed left factor P(R), the matrices of Milnor's formula restricted to rows i >= 1 depend on R
alone: each is summarised by its column sums cs_j = sum_i x_ij and the OR of each anti-diagonal's
entries mk_n (rows >= 1, remainders x_i0 included). Multiplying by any P(S) is then a per-column test:
x_0j = s_j - cs_j must be >= 0 and share no bit with mk_j, and T_j = x_0j | mk_j. The enumeration is
done once per R and cached; the GPU path holds the same arrays on the device.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from algebra.milnor.kernels import flip, rank_of, unpack_into
from algebra.milnor.ppart import MAX_LEN

#: Columns j >= 1 kept per matrix (2^j <= r_i <= MAX_DEGREE) and anti-diagonals (rows + columns).
MAX_COLS = 11
MAX_DIAG = MAX_LEN + MAX_COLS


@njit(cache=True, nogil=True)
def _enumerate(r_word, count_only, cs_out, mk_out):
    """Every admissible matrix of R (rows >= 1): fill cs_out/mk_out rows unless count_only; return the count."""
    r = np.zeros(MAX_LEN, dtype=np.int64)
    m = unpack_into(r_word, r)
    ncol = 0
    for i in range(m):
        while (np.int64(1) << (ncol + 1)) <= r[i]:
            ncol += 1
    rowrem = np.zeros(MAX_LEN + 1, dtype=np.int64)
    dor = np.zeros(MAX_DIAG + 1, dtype=np.int64)
    x = np.zeros(MAX_LEN * MAX_COLS + 1, dtype=np.int64)
    for i in range(1, m + 1):
        rowrem[i] = r[i - 1]
    ncell = m * ncol
    count = 0
    c = 0
    first = True
    while True:
        if c == ncell:
            # Remainders of rows without cells (ncol == 0) still have to be carry-free.
            ok = True
            if ncol == 0:
                for i in range(1, m + 1):
                    if rowrem[i] & dor[i]:
                        ok = False
            if ok:
                if not count_only:
                    for j in range(1, ncol + 1):
                        s = 0
                        for i in range(1, m + 1):
                            s += x[(i - 1) * ncol + j - 1]
                        cs_out[count, j - 1] = s
                    for n in range(1, m + ncol + 1):
                        v = dor[n]
                        if n <= m:
                            v |= rowrem[n]
                        mk_out[count, n - 1] = v
                count += 1
            c -= 1
            first = False
            if c < 0:
                break
            continue
        i = c // ncol + 1
        j = c % ncol + 1
        n = i + j
        if first:
            v = 0
        else:
            old = x[c]
            rowrem[i] += old << j
            dor[n] ^= old
            v = ((old | dor[n]) + 1) & ~dor[n]
        placed = False
        while (v << j) <= rowrem[i]:
            rowrem[i] -= v << j
            dor[n] |= v
            if j == ncol and (rowrem[i] & dor[i]) != 0:
                rowrem[i] += v << j
                dor[n] ^= v
                v = ((v | dor[n]) + 1) & ~dor[n]
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
    return count


def enumerate_admissible(r_word: int) -> tuple[np.ndarray, np.ndarray]:
    """(cs, mk) for every admissible matrix of R: uint16 arrays (num_mats, MAX_COLS) and (num_mats, MAX_DIAG)."""
    w = np.uint64(r_word)
    dummy = np.zeros((0, 0), dtype=np.int64)
    count = _enumerate(w, True, dummy, dummy)
    cs = np.zeros((count, MAX_COLS), dtype=np.int64)
    mk = np.zeros((count, MAX_DIAG), dtype=np.int64)
    _enumerate(w, False, cs, mk)
    return cs.astype(np.uint16), mk.astype(np.uint16)


class AdmissibleMaster:
    """Append-only cache of every R's admissible matrices, flattened for compiled kernels.

    R's matrices are rows start[k]:start[k] + count[k] of `cs` and `mk`, where k = index[R]. Arrays grow
    by doubling; callers take a snapshot (`arrays`) after `ensure` and read it without a lock.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.index: dict[int, int] = {}
        self._start: list[int] = []
        self._count: list[int] = []
        self._cs = np.zeros((1024, MAX_COLS), dtype=np.uint16)
        self._mk = np.zeros((1024, MAX_DIAG), dtype=np.uint16)
        self._used = 0

    def ensure(self, r_words: np.ndarray) -> np.ndarray:
        """Enumerate every R not yet cached; return each given R's slot."""
        uniq = np.unique(r_words)
        missing = [int(w) for w in uniq if int(w) not in self.index]
        if missing:
            computed = [(w, *enumerate_admissible(w)) for w in missing]
            with self._lock:
                for w, cs, mk in computed:
                    if w in self.index:
                        continue
                    need = self._used + len(cs)
                    if need > len(self._cs):
                        cap = max(need, 2 * len(self._cs))
                        self._cs = np.concatenate([self._cs, np.zeros((cap - len(self._cs), MAX_COLS), np.uint16)])
                        self._mk = np.concatenate([self._mk, np.zeros((cap - len(self._mk), MAX_DIAG), np.uint16)])
                    self._cs[self._used:need] = cs
                    self._mk[self._used:need] = mk
                    self.index[w] = len(self._start)
                    self._start.append(self._used)
                    self._count.append(len(cs))
                    self._used = need
        lookup = np.array([self.index[int(w)] for w in uniq], dtype=np.int64)
        return lookup[np.searchsorted(uniq, r_words)]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(start, count, cs, mk) as they are now."""
        with self._lock:
            return (np.array(self._start, dtype=np.int64), np.array(self._count, dtype=np.int64),
                    self._cs[: self._used], self._mk[: self._used])

    @property
    def num_matrices(self) -> int:
        return self._used

    @property
    def nbytes(self) -> int:
        return self._used * (MAX_COLS + MAX_DIAG) * 2


@njit(cache=True, nogil=True, inline="always")
def apply_matrix(cs_row, mk_row, s, slen, t) -> int:
    """T for one admissible matrix times S (exponents s[0..slen)); returns T's length, or -1 if the coefficient is 0."""
    tlen = 0
    for n in range(MAX_DIAG):
        sn = s[n] if n < slen else 0
        c = np.int64(cs_row[n]) if n < MAX_COLS else 0
        if sn < c:
            return -1
        x0 = sn - c
        mk = np.int64(mk_row[n])
        if x0 & mk:
            return -1
        v = x0 | mk
        t[n] = v
        if v != 0:
            tlen = n + 1
    return tlen


@njit(cache=True, nogil=True)
def admissible_batch_kernel(out, row_slot, row_deg, row_terms, term_start, term_s, term_sdeg, term_col,
                            start, count, cs, mk, g, index_map, map_offset, col_map):
    """Every product of a ProductBatch through the cached matrices of each row's R (the GPU kernel's twin)."""
    s = np.zeros(MAX_DIAG, dtype=np.int64)
    t = np.zeros(MAX_DIAG, dtype=np.int64)
    flips = 0
    for i in range(row_slot.shape[0]):
        k = row_slot[i]
        lst = row_terms[i]
        for q in range(term_start[lst], term_start[lst + 1]):
            slen = unpack_into(term_s[q], s)
            deg = row_deg[i] + term_sdeg[q]
            for a in range(start[k], start[k] + count[k]):
                tlen = apply_matrix(cs[a], mk[a], s, slen, t)
                if tlen >= 0:
                    flips += flip(out, i, term_col[q] + rank_of(t, tlen, deg, g, index_map, map_offset), col_map)
    return flips
