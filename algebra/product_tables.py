"""Right multiplication by P(S) on A_n, computed once for every R of degree n and kept for the whole run.

A resolution multiplies the same pairs over and over: row P(R) g of d_s meets every term P(S) h of d(g), and
the same small S recur in the differentials of many generators, in every filtration. S_2 through stem 90, every
s: 56.9 million (R, S) pairs, 4.7 million of them distinct, and the tables of all R of each (S, deg R) met hold
5.6 million rows. So the first batch that meets (S, n) fills its table (every R in the basis's degree n, by the
enumeration kernel), and every later one only copies the table's row: the ranks T of the terms of P(R) P(S),
already renamed through the basis's index map.

Tables are shared by the threads of a run. They are appended under a lock and never changed: a batch reads a
snapshot, and a table that snapshot does not hold (made by another thread meanwhile, or never made because the
byte budget is spent) is enumerated directly, so a result never depends on which tables exist.
"""
from __future__ import annotations

import os
import threading
from typing import NamedTuple

import numpy as np
from numba import njit

from algebra.milnor_kernels import NO_FORBID, SCRATCH, product_into
from algebra.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN, XI_DEGREES
from fp.bits import ctz

#: Default byte budget of one basis's tables (NASSAU_PRODUCT_TABLES_MB overrides; 0 turns tables off).
DEFAULT_BUDGET_MB = 1024
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no packed word has every field at its maximum in a real degree
_SHIFT = FIELD_SHIFT.copy()
_MASK = FIELD_MASK.astype(np.int64)
_XI = XI_DEGREES.copy()


def budget_bytes() -> int:
    """The tables' byte budget from NASSAU_PRODUCT_TABLES_MB (default DEFAULT_BUDGET_MB)."""
    raw = os.environ.get("NASSAU_PRODUCT_TABLES_MB", "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_BUDGET_MB
    except ValueError:
        raise ValueError(f"NASSAU_PRODUCT_TABLES_MB must be a number of MiB, not {raw!r}") from None
    return max(0, int(mb * (1 << 20)))


class Snapshot(NamedTuple):
    """What a batch reads: the key hash (S word, degree of R) -> table, and the tables below `ntables`.

    Table k's row for the R of rank r holds ranks[tab_res[k] + row_off[tab_rows[k] + r] ...
    tab_res[k] + row_off[tab_rows[k] + r + 1]]. Ranks are 16 bits, so only products landing in a degree of at most
    65536 elements are tabled (A through degree 263)."""

    keys_s: np.ndarray    # uint64, a power of two long; _EMPTY marks a free slot
    keys_n: np.ndarray    # int64
    vals: np.ndarray      # int64 table id (-1 while being written)
    ntables: int
    tab_rows: np.ndarray  # int64: where table k's row offsets start in row_off
    tab_res: np.ndarray   # int64: where its ranks start in ranks
    row_off: np.ndarray   # uint32: per table dim A_n + 1 offsets, local to the table
    ranks: np.ndarray     # uint16: the terms' ranks T in degree n + deg S


#: Largest dimension of a degree whose elements a 16-bit rank can name.
MAX_RANKED = 1 << 16


@njit(cache=True, nogil=True, inline="always")
def _slot(keys_s, keys_n, s, n) -> int:
    """The slot of key (s, n): where it is, or the free slot where it would go (linear probing)."""
    h = (s * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(n) * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    cap = keys_s.shape[0]
    at = np.int64(h & np.uint64(cap - 1))
    while True:
        k = keys_s[at]
        if k == _EMPTY or (k == s and keys_n[at] == n):
            return at
        at = (at + 1) & (cap - 1)


@njit(cache=True, nogil=True, inline="always")
def lookup(keys_s, keys_n, vals, s, n, ntables) -> int:
    """The table of (s, n) if this snapshot holds it, else -1."""
    at = _slot(keys_s, keys_n, s, n)
    if keys_s[at] != s or keys_n[at] != n:
        return -1
    tid = vals[at]
    return tid if tid < ntables else -1


@njit(cache=True, nogil=True)
def _insert(keys_s, keys_n, vals, new_s, new_n, new_tid) -> None:
    for j in range(new_s.shape[0]):
        at = _slot(keys_s, keys_n, new_s[j], new_n[j])
        vals[at] = new_tid[j]
        keys_n[at] = new_n[j]
        keys_s[at] = new_s[j]


@njit(cache=True, nogil=True)
def _absent(keys_s, keys_n, vals, ntables, s, n):
    out = np.empty(s.shape[0], dtype=np.bool_)
    for j in range(s.shape[0]):
        out[j] = lookup(keys_s, keys_n, vals, s[j], n[j], ntables) < 0
    return out


@njit(cache=True, nogil=True, inline="always")
def word_degree(word: np.uint64) -> int:
    d = 0
    for i in range(MAX_LEN):
        d += np.int64((word >> np.uint64(_SHIFT[i])) & np.uint64(_MASK[i])) * _XI[i]
    return d


@njit(cache=True, nogil=True)
def _missing(row_deg, row_terms, term_start, term_s, keys_s, keys_n, vals, ntables, flat_offset):
    """The (S, deg R) keys of a batch with no table yet, with repeats (the caller keeps one of each). Products
    landing in a degree too large for 16-bit ranks, or beyond the basis's tables, are left to the enumeration."""
    nrows = row_deg.shape[0]
    bound = 0
    i = 0
    while i < nrows:
        lst = row_terms[i]
        n = row_deg[i]
        while i < nrows and row_terms[i] == lst and row_deg[i] == n:
            i += 1
        bound += term_start[lst + 1] - term_start[lst]
    out_s = np.empty(bound, dtype=np.uint64)
    out_n = np.empty(bound, dtype=np.int64)
    found = 0
    i = 0
    while i < nrows:
        lst = row_terms[i]
        n = row_deg[i]
        while i < nrows and row_terms[i] == lst and row_deg[i] == n:
            i += 1
        for q in range(term_start[lst], term_start[lst + 1]):
            d = n + word_degree(term_s[q])
            if d + 1 >= flat_offset.shape[0] or flat_offset[d + 1] - flat_offset[d] > MAX_RANKED:
                continue
            if lookup(keys_s, keys_n, vals, term_s[q], n, ntables) < 0:
                out_s[found] = term_s[q]
                out_n[found] = n
                found += 1
    return out_s[:found], out_n[:found]


@njit(cache=True, nogil=True)
def _fill(keys_s, keys_n, flat, flat_offset, g, index_map, map_offset):
    """Every table of the given keys: for each R of degree n (basis order), the ranks of the terms of P(R) P(S).

    Each product goes into a scratch row by the enumeration kernel (terms that meet twice cancel there), and the
    row's set bits are its terms. Returns where each key's row offsets and ranks start, then the offsets (local to
    each table) and the ranks."""
    nkeys = keys_s.shape[0]
    row_start = np.zeros(nkeys + 1, dtype=np.int64)
    for j in range(nkeys):
        n = keys_n[j]
        row_start[j + 1] = row_start[j] + flat_offset[n + 1] - flat_offset[n] + 1
    row_off = np.empty(row_start[nkeys], dtype=np.uint32)
    res_start = np.zeros(nkeys + 1, dtype=np.int64)
    ranks = np.empty(max(1024, 2 * row_start[nkeys]), dtype=np.uint16)
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    used = 0
    for j in range(nkeys):
        n = keys_n[j]
        s = keys_s[j]
        d = n + word_degree(s)
        nw = (flat_offset[d + 1] - flat_offset[d] + 63) >> 6
        row = np.zeros((1, max(nw, 1)), dtype=np.uint64)
        first = used
        base = row_start[j]
        dim_n = row_start[j + 1] - base - 1
        for r in range(dim_n):
            row_off[base + r] = used - first
            if product_into(row, 0, 0, flat[flat_offset[n] + r], s, d, g, index_map, map_offset, empty, NO_FORBID,
                            scratch) == 0:
                continue
            for w in range(nw):
                x = row[0, w]
                if x == 0:
                    continue
                row[0, w] = 0
                while x != 0:
                    if used == ranks.shape[0]:
                        grown = np.empty(2 * used, dtype=np.uint16)
                        grown[:used] = ranks
                        ranks = grown
                    ranks[used] = w * 64 + ctz(x)
                    used += 1
                    x &= x - np.uint64(1)
        row_off[base + dim_n] = used - first
        res_start[j + 1] = used
    return row_start, res_start, row_off, ranks[:used]


class ProductTables:
    """The tables of one basis (p = 2: the Milnor basis of A or of a profile algebra, or its unstable order)."""

    def __init__(self, basis, budget: int | None = None) -> None:
        self.basis = basis
        self.budget = budget_bytes() if budget is None else budget
        self._lock = threading.Lock()
        self._full = self.budget == 0
        cap = 1 << 12
        self._snap = Snapshot(np.full(cap, _EMPTY, dtype=np.uint64), np.zeros(cap, dtype=np.int64),
                              np.full(cap, -1, dtype=np.int64), 0, np.zeros(64, dtype=np.int64),
                              np.zeros(64, dtype=np.int64), np.zeros(cap, dtype=np.uint32),
                              np.zeros(cap, dtype=np.uint16))
        self._filling: set[tuple[int, int]] = set()
        self._nkeys = 0
        self._rows_used = 0
        self._ranks_used = 0
        #: Tables made, and batches that made some (a test hook).
        self.counts = {"tables": 0, "filled_batches": 0}

    @property
    def nbytes(self) -> int:
        """Bytes the tables hold: row offsets, ranks, the key hash and the table starts."""
        return 4 * self._rows_used + 2 * self._ranks_used + 24 * len(self._snap.keys_s) + 16 * self._snap.ntables

    def snapshot(self) -> Snapshot:
        return self._snap

    def ensure(self, row_deg, row_terms, term_start, term_s) -> Snapshot:
        """Make the tables this batch needs and does not have (while the budget lasts); return a snapshot."""
        snap = self._snap
        if self._full or len(row_deg) == 0:
            return snap
        basis = self.basis
        miss_s, miss_n = _missing(row_deg, row_terms, term_start, term_s, snap.keys_s, snap.keys_n, snap.vals,
                                  snap.ntables, basis.flat_offset)
        if len(miss_s) == 0:
            return snap
        keys = np.unique(np.stack([miss_s, miss_n.astype(np.uint64)], axis=1), axis=0)
        new_s, new_n = self._claim(keys[:, 0].copy(), keys[:, 1].astype(np.int64))
        if len(new_s) == 0:
            return self._snap
        try:
            made = _fill(new_s, new_n, basis.flat, basis.flat_offset, basis.rank_g, basis.index_map,
                         basis.index_map_offset)
            self._add(new_s, new_n, *made)
        finally:
            with self._lock:
                self._filling.difference_update(zip(new_s.tolist(), new_n.tolist()))
        return self._snap

    def _claim(self, new_s, new_n):
        """The keys this thread is to make: those nobody has made or is making now. A batch meeting a key that
        another thread is making enumerates its products meanwhile (making it twice would double its bytes)."""
        with self._lock:
            snap = self._snap
            absent = _absent(snap.keys_s, snap.keys_n, snap.vals, snap.ntables, new_s, new_n)
            mine = [j for j, key in enumerate(zip(new_s.tolist(), new_n.tolist()))
                    if absent[j] and key not in self._filling]
            new_s, new_n = new_s[mine], new_n[mine]
            self._filling.update(zip(new_s.tolist(), new_n.tolist()))
            return new_s, new_n

    def _add(self, new_s, new_n, row_start, res_start, row_off, ranks) -> None:
        """Publish new tables: their data first, then their keys, then the snapshot naming them."""
        with self._lock:
            if self._full:
                return
            if self.nbytes + 4 * len(row_off) + 2 * len(ranks) + 40 * len(new_s) > self.budget:
                self._full = True
                return
            snap = self._snap
            first = snap.ntables
            tab_rows = _append(snap.tab_rows, first, self._rows_used + row_start[:-1])
            tab_res = _append(snap.tab_res, first, self._ranks_used + res_start[:-1])
            all_rows = _append(snap.row_off, self._rows_used, row_off)
            all_ranks = _append(snap.ranks, self._ranks_used, ranks)
            keys_s, keys_n, vals = snap.keys_s, snap.keys_n, snap.vals
            if 2 * (self._nkeys + len(new_s)) > len(keys_s):
                keys_s, keys_n, vals = _rehash(keys_s, keys_n, vals, 4 * (self._nkeys + len(new_s)))
            _insert(keys_s, keys_n, vals, new_s, new_n, np.arange(first, first + len(new_s), dtype=np.int64))
            self._nkeys += len(new_s)
            self._rows_used += len(row_off)
            self._ranks_used += len(ranks)
            self.counts["tables"] += len(new_s)
            self.counts["filled_batches"] += 1
            self._snap = Snapshot(keys_s, keys_n, vals, first + len(new_s), tab_rows, tab_res, all_rows, all_ranks)


def _append(arr: np.ndarray, used: int, new: np.ndarray) -> np.ndarray:
    """arr with `new` written after its first `used` entries, in place when it has room, else in a copy twice as
    large (readers of the old array never look past `used`)."""
    need = used + len(new)
    if need > len(arr):
        grown = np.zeros(max(need, 2 * len(arr)), dtype=arr.dtype)
        grown[:used] = arr[:used]
        arr = grown
    arr[used:need] = new
    return arr


def _rehash(keys_s, keys_n, vals, cap_at_least: int):
    cap = 1 << max(12, (cap_at_least - 1).bit_length())
    new_s = np.full(cap, _EMPTY, dtype=np.uint64)
    new_n = np.zeros(cap, dtype=np.int64)
    new_v = np.full(cap, -1, dtype=np.int64)
    live = keys_s != _EMPTY
    _insert(new_s, new_n, new_v, keys_s[live], keys_n[live], vals[live])
    return new_s, new_n, new_v


_REGISTRY_LOCK = threading.Lock()


def tables_for(basis) -> ProductTables:
    """The basis's tables, made on first use (one set per basis object, shared by every thread)."""
    tables = getattr(basis, "_product_tables", None)
    if tables is None:
        with _REGISTRY_LOCK:
            tables = getattr(basis, "_product_tables", None)
            if tables is None:
                tables = ProductTables(basis)
                basis._product_tables = tables
    return tables


def use_tables(basis, budget: int) -> ProductTables:
    """Give the basis fresh tables with this byte budget (0: every product enumerated), e.g. to compare both paths."""
    with _REGISTRY_LOCK:
        basis._product_tables = ProductTables(basis, budget)
        return basis._product_tables
