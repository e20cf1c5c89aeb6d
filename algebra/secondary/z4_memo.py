"""Z/4 products sigma(Sq R) sigma(Sq S) of the pair algebra, each pair (R, S) enumerated once and kept for the run.

The composites of a secondary lift multiply every middle basis element Sq(R) y by every term Sq(S) z of d(y),
and the same pairs recur for other generators y and other filtrations: the d2 lift of S_2 through stem 70, s <= 20,
makes 2.07 million such products of 0.61 million distinct pairs, of 3.75 terms each on average. Enumerating the
Milnor matrices of a product (z4_product, cut at two carries) costs more than reading its kept terms, a hash probe
and a few additions: that lift took 7.5-8.5 s with them kept against 9.3-10.1 s without.
Whole tables (every R of a degree at once, as algebra.milnor.product_tables keeps for mod-2 products) were tried:
filling them cost more than they saved, because most of their rows are never read.

Kept like the product tables: shared by a run's threads, appended under a lock and never changed, read without it.
A pair that is not kept yet is enumerated (the same terms), so a result never depends on what is kept. The key
hash holds per slot the R word + 1, the S word + 1 (0: a free slot) and (start << 16 | count) + 1 of the pair's terms
in `terms`, each term rank << 2 | coefficient; a slot's value is written before its words and its terms before it
(separate compiled calls), so a reader that finds a key finds its terms, and a zero value reads as "not kept". A
reader takes a slot's value only under its own key's words: a free slot may already hold another pair's value.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from algebra.milnor.product_tables import budget_bytes, kept_on
from algebra.secondary.pair_algebra import z4_product, z4_workspace

#: Default byte budget of one basis's kept products, their terms and the key hash (NASSAU_Z4_MEMO_MB overrides; 0
#: keeps none).
DEFAULT_BUDGET_MB = 256
_ONE = np.uint64(1)  # a slot holds its words plus one (no packed word is all ones), so a zeroed slot is free
_COUNT_BITS = 16
#: Products landing in a degree with this many elements or more are enumerated every time (the count's 16 bits).
MAX_KEPT_DIM = 1 << _COUNT_BITS


@njit(cache=True, nogil=True, inline="always")
def _slot(keys, r, s) -> int:
    """The slot of pair (r, s): where it is, or the free slot where it would go (linear probing)."""
    h = (r * np.uint64(0x9E3779B97F4A7C15)) ^ (s * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(29)
    cap = keys.shape[0]
    at = np.int64(h & np.uint64(cap - 1))
    while True:
        k = keys[at, 0]
        if k == 0 or (k == r + _ONE and keys[at, 1] == s + _ONE):
            return at
        at = (at + 1) & (cap - 1)


@njit(cache=True, nogil=True)
def _memo_batch(out, row_r, row_deg, row_terms, term_start, term_s, term_sdeg, term_col, g, index_map, map_offset,
                flat_offset, keys, terms, collect):
    """z4_batch, reading kept pairs from (keys, terms) and enumerating the others (into out and, when collect, into
    the new pairs returned: R words, S words, term counts, their terms; a pair met twice is returned twice).
    Also returns how many products it enumerated, and how many it made."""
    ws = z4_workspace()
    scratch = np.zeros(out.shape[1], dtype=np.int8)
    hits = np.empty(MAX_KEPT_DIM + 1, dtype=np.int64)  # hits[0] is set before each use
    bound = 0
    for i in range(row_r.shape[0]):
        bound += term_start[row_terms[i] + 1] - term_start[row_terms[i]]
    new_r = np.empty(bound, dtype=np.uint64)
    new_s = np.empty(bound, dtype=np.uint64)
    new_count = np.empty(bound, dtype=np.int64)
    new_terms = np.empty(max(64, 4 * bound), dtype=np.uint32)
    nnew = 0
    used = 0
    enumerated = 0
    count_mask = np.uint64((1 << _COUNT_BITS) - 1)
    for i in range(row_r.shape[0]):
        r = np.uint64(row_r[i])
        lst = row_terms[i]
        for q in range(term_start[lst], term_start[lst + 1]):
            s = np.uint64(term_s[q])
            col = term_col[q]
            at = _slot(keys, r, s)
            # The value only under this pair's own words: a probe that ends at a free slot may find there the value
            # of another pair that a thread is inserting (value first, words last).
            value = keys[at, 2] if keys[at, 0] == r + _ONE and keys[at, 1] == s + _ONE else np.uint64(0)
            if value != 0:
                start = np.int64((value - np.uint64(1)) >> np.uint64(_COUNT_BITS))
                for e in range(start, start + np.int64((value - np.uint64(1)) & count_mask)):
                    w = terms[e]
                    idx = col + np.int64(w >> np.uint32(2))
                    out[i, idx] = (out[i, idx] + np.int8(w & np.uint32(3))) & 3
                continue
            enumerated += 1
            deg = row_deg[i] + term_sdeg[q]
            too_large = deg + 1 >= flat_offset.shape[0] or flat_offset[deg + 1] - flat_offset[deg] >= MAX_KEPT_DIM
            if not collect or too_large:
                z4_product(r, s, deg, g, index_map, map_offset, out[i, col:], ws, hits[:0])
                continue
            hits[0] = 0
            z4_product(r, s, deg, g, index_map, map_offset, scratch, ws, hits)
            first = used
            listed = hits[0] >= 0
            for h in range(hits[0] if listed else flat_offset[deg + 1] - flat_offset[deg]):
                k = hits[h + 1] if listed else h
                c = scratch[k]
                if c == 0:
                    continue
                scratch[k] = 0
                out[i, col + k] = (out[i, col + k] + c) & 3
                if used == new_terms.shape[0]:
                    grown = np.empty(2 * used, dtype=np.uint32)
                    grown[:used] = new_terms
                    new_terms = grown
                new_terms[used] = np.uint32((k << 2) | c)
                used += 1
            new_r[nnew] = r
            new_s[nnew] = s
            new_count[nnew] = used - first
            nnew += 1
    return new_r[:nnew], new_s[:nnew], new_count[:nnew], new_terms[:used], enumerated, bound


@njit(cache=True, nogil=True)
def _place(keys, terms, used, new_r, new_s, new_count, new_terms):
    """Copy the terms of the new pairs that keys lacks (each pair once) to terms from `used`; returns which pairs
    were placed and their values (start << 16 | count) + 1, and the new end of terms."""
    cap = 16
    while cap < 2 * new_r.shape[0]:
        cap *= 2
    seen = np.zeros((cap, 3), dtype=np.uint64)
    placed = np.zeros(new_r.shape[0], dtype=np.bool_)
    values = np.zeros(new_r.shape[0], dtype=np.uint64)
    src = 0
    for j in range(new_r.shape[0]):
        count = new_count[j]
        r, s = new_r[j], new_s[j]
        if keys[_slot(keys, r, s), 0] == 0:
            at = _slot(seen, r, s)
            if seen[at, 0] == 0 and used + count <= terms.shape[0]:
                seen[at, 1] = s + _ONE
                seen[at, 0] = r + _ONE
                terms[used:used + count] = new_terms[src:src + count]
                placed[j] = True
                values[j] = ((np.uint64(used) << np.uint64(_COUNT_BITS)) | np.uint64(count)) + np.uint64(1)
                used += count
        src += count
    return placed, values, used


@njit(cache=True, nogil=True)
def _insert(keys, new_r, new_s, values) -> None:
    """Add keys, the value first and the R word (which marks the slot taken) last."""
    for j in range(new_r.shape[0]):
        at = _slot(keys, new_r[j], new_s[j])
        keys[at, 2] = values[j]
        keys[at, 1] = new_s[j] + _ONE
        keys[at, 0] = new_r[j] + _ONE


def _empty_keys(cap: int) -> np.ndarray:
    """A hash of free slots: zeros, which the system gives as untouched pages (filling a sentinel cost 0.27 s of the
    d2 lift through stem 70)."""
    return np.zeros((cap, 3), dtype=np.uint64)


class Z4Memo:
    """The kept Z/4 products of one basis (the Milnor basis of A)."""

    def __init__(self, basis, budget: int | None = None) -> None:
        self.basis = basis
        self.budget = budget_bytes("NASSAU_Z4_MEMO_MB", DEFAULT_BUDGET_MB) if budget is None else budget
        self._lock = threading.Lock()
        self._keys = _empty_keys(1 << 12)
        self._nkeys = 0
        # As large as the budget could fill, allocated once: the system gives zeroed pages only as they are written.
        self._terms = np.zeros(max(1, self.budget // 4), dtype=np.uint32)
        self._used = 0
        self._full = self.budget == 0
        #: Products made, those enumerated, and pairs kept (a test hook).
        self.counts = {"products": 0, "enumerated": 0, "kept": 0}

    @property
    def nbytes(self) -> int:
        return 4 * self._used + self._keys.nbytes

    def multiply(self, out: np.ndarray, batch) -> None:
        """out[i, term_col + index(T)] += the Z/4 coefficient of Sq(T) in sigma(row_r[i]) sigma(term_s), for every
        term of row i's list (out: int8 rows, values kept mod 4): algebra.secondary.pair_algebra.z4_batch, the twin."""
        b = self.basis
        new_r, new_s, new_count, new_terms, enumerated, made = _memo_batch(
            out, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
            batch.term_col, b.rank_g, b.index_map, b.index_map_offset, b.flat_offset, self._keys,
            self._terms, not self._full)
        with self._lock:
            self.counts["products"] += made
            self.counts["enumerated"] += enumerated
            if len(new_r) and not self._full:
                self._keep(new_r, new_s, new_count, new_terms)

    def _keep(self, new_r, new_s, new_count, new_terms) -> None:
        """Publish new pairs (under the lock): their terms, then their keys (into a hash twice as large when it would
        be over half full)."""
        cap = len(self._keys)
        while 2 * (self._nkeys + len(new_r)) > cap:
            cap *= 2
        rehash = self._keys.nbytes if cap > len(self._keys) else 0  # the old hash, while the new one is filled
        if 4 * (self._used + len(new_terms)) + 24 * cap + rehash > self.budget:
            self._full = True
            return
        placed, values, self._used = _place(self._keys, self._terms, self._used, new_r, new_s, new_count, new_terms)
        keys = self._keys
        if cap > len(keys):
            keys = _empty_keys(cap)
            live = self._keys[:, 0] != 0
            _insert(keys, self._keys[live, 0] - _ONE, self._keys[live, 1] - _ONE, self._keys[live, 2].copy())
        _insert(keys, new_r[placed], new_s[placed], values[placed])
        self._keys = keys  # readers holding the old hash still read a consistent one
        self._nkeys += int(placed.sum())
        self.counts["kept"] += int(placed.sum())


def z4_memo_for(basis) -> Z4Memo:
    """The basis's kept Z/4 products, made on first use (one per basis object, shared by every thread)."""
    return kept_on(basis, "_z4_memo", lambda: Z4Memo(basis))


def use_z4_memo(basis, budget: int) -> Z4Memo:
    """Give the basis a fresh memo with this byte budget (0: every product enumerated), e.g. to compare both paths."""
    basis._z4_memo = Z4Memo(basis, budget)
    return basis._z4_memo
