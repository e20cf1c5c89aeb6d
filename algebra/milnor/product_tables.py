"""Right multiplication by P(S) on A_n, computed once for every R of degree n and kept for the whole run.

A resolution multiplies the same pairs over and over: row P(R) g of d_s meets every term P(S) h of d(g), and
the same small S recur in the differentials of many generators, in every filtration. S_2 through stem 90, every
s: 56.9 million (R, S) pairs, 4.7 million of them distinct, and the tables of all R of each (S, deg R) met hold
5.6 million rows. So the first batch that meets (S, n) fills its table (every R in the basis's degree n, by one
enumeration of Milnor matrices shared by all R), and every later one only copies the table's row: the ranks T of
the terms of P(R) P(S), already renamed through the basis's index map.

Tables are shared by the threads of a run, and by its worker processes (table_arena). They are appended under a
lock and never changed: a batch reads a snapshot, and a table that snapshot does not hold (being made by another
thread or process meanwhile, or never made because the byte budget is spent) is enumerated directly, so a result
never depends on which tables exist.

At an odd prime the same tables hold Q(E) P(R) * Q(E') P(S): a key is the packed word of Q(E') P(S) and the degree
of the left factor, and each entry is a term's rank with its coefficient in the top bits (odd_kernels.coef_bits),
filled product by product (odd_kernels.fill_odd_tables).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import njit

from algebra.milnor.kernels import FORBID_LEN, SCRATCH, multiply_into, unpack_into
from algebra.milnor.odd_kernels import binomial_table, coef_bits, fill_odd_tables, signature_filter, workspace
from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN, XI_DEGREES
from algebra.milnor.table_arena import FULL, LOGGED, RANKS, ROWS, TABLES, Arena
from algebra.milnor.table_layout import append, table_starts
from algebra.milnor.warmup import helper_compiling
from fp.bits import ctz

#: Share of this machine's memory that one basis's tables may fill unless NASSAU_PRODUCT_TABLES_MB sets a budget in
#: MiB (0 turns tables off). Pages are taken only as tables are written, so this is what a large run may reach, not
#: what a run holds. A fixed 1 GiB ran out on S_2 near stem 120 and left the products of the larger stems to be
#: enumerated: through stem 150 (s <= 152, 2 threads, this 2-core machine) the run had not finished in 13.6 min,
#: and took 12.7 min with room for 6 GiB of tables.
MEMORY_SHARE = 0.25
_NO_TIDS = np.zeros(0, dtype=np.int64)  # ensure's answer when the batch kernel is to look tables up itself
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # no packed word has every field at its maximum in a real degree
_N_MASK = np.uint64(0xFFFF)
_SHIFT = FIELD_SHIFT.copy()
_MASK = FIELD_MASK.astype(np.int64)
_XI = XI_DEGREES.copy()


def machine_memory() -> int:
    """Bytes of memory this process may use: the machine's, or its control group's limit if lower (a container)."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = open("/sys/fs/cgroup/memory.max").read().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def budget_bytes(variable: str = "NASSAU_PRODUCT_TABLES_MB", default_mb: float | None = None) -> int:
    """A byte budget from an environment variable in MiB: the product tables' (NASSAU_PRODUCT_TABLES_MB, by default
    MEMORY_SHARE of machine_memory()) unless told another."""
    raw = os.environ.get(variable, "").strip()
    try:
        mb = float(raw) if raw else default_mb
    except ValueError:
        raise ValueError(f"{variable} must be a number of MiB, not {raw!r}") from None
    if mb is None:
        return int(MEMORY_SHARE * machine_memory())
    return max(0, int(mb * (1 << 20)))


class Snapshot(NamedTuple):
    """What a batch reads: the key hash (S word, degree of R) -> table, and the tables below `ntables`.

    Table k's row for the R of rank r holds ranks[tab_res[k] + row_off[tab_rows[k] + r] ...
    tab_res[k] + row_off[tab_rows[k] + r + 1]]. Ranks and row offsets are 16 bits, so only products landing in a
    degree of at most 65536 elements are tabled (A through degree 263), and a table of 65536 terms or more is not
    kept (its key is marked, lookups answer NOT_KEPT and its products are enumerated)."""

    keys: np.ndarray      # uint64 (slots, 2), slots a power of two: S word (_EMPTY: free), deg R | (table + 1) << 16
    ntables: int
    tab_rows: np.ndarray  # int64: where table k's row offsets start in row_off
    tab_res: np.ndarray   # int64: where its ranks start in ranks
    row_off: np.ndarray   # uint16: per table dim A_n + 1 offsets, local to the table
    ranks: np.ndarray     # uint16: the terms' ranks T in degree n + deg S


#: Largest dimension of a degree whose elements a 16-bit rank can name; a table holds fewer terms than this.
MAX_RANKED = 1 << 16
#: lookup's answer for a key whose table has too many terms to keep: enumerate, and do not make it again.
NOT_KEPT = -2
_TOO_LARGE = (1 << 48) - 2  # the table id stored for such a key
_FILLING = (1 << 48) - 3  # the table id of a key claimed by a thread or process filling its table


@njit(cache=True, nogil=True, inline="always")
def _slot(keys, s, n) -> int:
    """The slot of key (s, n): where it is, or the free slot where it would go (linear probing)."""
    h = (s * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(n) * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    cap = keys.shape[0]
    at = np.int64(h & np.uint64(cap - 1))
    while True:
        k = keys[at, 0]
        if k == _EMPTY or (k == s and (keys[at, 1] & _N_MASK) == np.uint64(n)):
            return at
        at = (at + 1) & (cap - 1)


@njit(cache=True, nogil=True, inline="always")
def lookup(keys, s, n, ntables) -> int:
    """The table of (s, n) if this snapshot holds it, NOT_KEPT if its table is too large to keep, else -1."""
    return _table_at(keys, _slot(keys, s, n), s, n, ntables)


@njit(cache=True, nogil=True, inline="always")
def _table_at(keys, at, s, n, ntables) -> int:
    """lookup's answer from the slot its probe ended at, read again under both words of the key: the probe may end at
    a free slot where a thread is inserting another key meanwhile (value word first), and one with the same S and
    another degree would otherwise read as this key's."""
    if keys[at, 0] != s or (keys[at, 1] & _N_MASK) != np.uint64(n):
        return -1
    tid = np.int64(keys[at, 1] >> np.uint64(16)) - 1
    if tid == _TOO_LARGE:
        return NOT_KEPT
    return tid if tid < ntables else -1


@njit(cache=True, nogil=True)
def _insert(keys, words) -> int:
    """Add log entries (a slot's two words each; a later entry of a key replaces its value) and return the slots
    newly taken. The value word goes first, so a reader that sees the key sees this value or the one before."""
    taken = 0
    for j in range(words.shape[0]):
        at = _slot(keys, words[j, 0], words[j, 1] & _N_MASK)
        taken += keys[at, 0] == _EMPTY
        keys[at, 1] = words[j, 1]
        keys[at, 0] = words[j, 0]
    return taken


@njit(cache=True, nogil=True)
def _unclaimed(keys, s_words, n_degs):
    """Which keys nobody has made, is making or has marked: absent, or let go (table id -1)."""
    out = np.empty(s_words.shape[0], dtype=np.bool_)
    for q in range(s_words.shape[0]):
        at = _slot(keys, s_words[q], n_degs[q])
        out[q] = keys[at, 0] == _EMPTY or (keys[at, 1] >> np.uint64(16)) == np.uint64(0)
    return out


@njit(cache=True, nogil=True, inline="always")
def word_degree(word: np.uint64) -> int:
    d = 0
    for i in range(MAX_LEN):
        d += np.int64((word >> np.uint64(_SHIFT[i])) & np.uint64(_MASK[i])) * _XI[i]
    return d


@njit(cache=True, nogil=True, inline="always")
def run_end(row_terms, row_deg, i) -> int:
    """The end of the run of rows from i with row i's term list and degree: those rows meet the same tables."""
    j = i
    while j < row_terms.shape[0] and row_terms[j] == row_terms[i] and row_deg[j] == row_deg[i]:
        j += 1
    return j


@njit(cache=True, nogil=True)
def _block_keys(row_deg, row_terms, term_start, term_s, term_sdeg):
    """The (S, deg R, deg S) of every term of every run of rows with equal (term list, deg R) in a batch."""
    bound = 0
    i = 0
    while i < row_deg.shape[0]:
        bound += term_start[row_terms[i] + 1] - term_start[row_terms[i]]
        i = run_end(row_terms, row_deg, i)
    out_s = np.empty(bound, dtype=np.uint64)
    out_n = np.empty(bound, dtype=np.int64)
    out_d = np.empty(bound, dtype=term_sdeg.dtype)
    found = 0
    i = 0
    while i < row_deg.shape[0]:
        for q in range(term_start[row_terms[i]], term_start[row_terms[i] + 1]):
            out_s[found] = term_s[q]
            out_n[found] = row_deg[i]
            out_d[found] = term_sdeg[q]
            found += 1
        i = run_end(row_terms, row_deg, i)
    return out_s, out_n, out_d


@njit(cache=True, nogil=True)
def _key_tables(s_words, n_degs, s_degs, keys, ntables, flat_offset, max_dim):
    """What lookup answers for each key (S, deg R), and the keys among them with no table yet, each once.

    Products landing in a degree of more than max_dim elements (16-bit ranks; fewer at odd p, whose entries hold
    a coefficient too), or beyond the basis's tables (a negative deg R: no rows), are left to the enumeration (-1,
    not missing). The answers go to the batch kernel, which then looks up nothing: one lookup per key instead of
    two (S_2's d2 lift through stem 70 looks up 16 million keys)."""
    count = s_words.shape[0]
    tids = np.full(count, -1, dtype=np.int64)
    wanted = np.zeros(count, dtype=np.bool_)
    absent = 0
    for q in range(count):
        n = n_degs[q]
        d = n + s_degs[q]
        if n < 0 or d + 1 >= flat_offset.shape[0] or flat_offset[d + 1] - flat_offset[d] > max_dim:
            continue
        tids[q] = lookup(keys, s_words[q], n, ntables)
        if tids[q] == -1:
            wanted[q] = True
            absent += 1
    cap = 16
    while cap < 2 * absent:
        cap *= 2
    seen = np.empty((cap, 2), dtype=np.uint64)  # the missing keys found so far, hashed like the tables' own
    seen[:, 0] = _EMPTY
    out_s = np.empty(absent, dtype=np.uint64)
    out_n = np.empty(absent, dtype=np.int64)
    found = 0
    for q in range(count):
        if wanted[q]:
            at = _slot(seen, s_words[q], n_degs[q])
            if seen[at, 0] == _EMPTY:
                seen[at, 1] = np.uint64(n_degs[q])
                seen[at, 0] = s_words[q]
                out_s[found] = s_words[q]
                out_n[found] = n_degs[q]
                found += 1
    return tids, out_s[:found], out_n[:found]


@njit(cache=True, nogil=True)
def _tables_of(keys, ntables, s_words, n_degs):
    """What lookup answers for each key (-1 also for a negative deg R: no rows)."""
    out = np.empty(s_words.shape[0], dtype=np.int64)
    for q in range(s_words.shape[0]):
        out[q] = lookup(keys, s_words[q], n_degs[q], ntables) if n_degs[q] >= 0 else -1
    return out


@njit(cache=True, nogil=True)
def _table_terms(out, s_word, n, caps, g, index_map, map_offset) -> int:
    """XOR into out[rank R, rank T] every term P(T) of P(R) P(S), for every R of degree n at once.

    Milnor's formula sums over matrices X with column sums s_j (j >= 1, row 0 included) and rows
    r_i = sum_j 2^j x_ij (i >= 1, column 0 included); P(T) with t_d = sum_{i+j=d} x_ij has an odd coefficient
    exactly when each anti-diagonal's entries have disjoint bits. With S fixed, the interior (i, j >= 1) and the
    top row x_0j = s_j - sum_i x_ij do not depend on R: they are enumerated once, column by column, leaving a
    degree n' = n - sum (2^i - 1) 2^j x_ij for the first column. Every split of n' into x_i0 (2^i - 1) with x_i0
    disjoint from the rest of its anti-diagonal is then one R and one term. The enumeration per R (product_into)
    walks the interior again for each R; this walks it once per table (2.4x faster filling S_2's tables through
    stem 70). caps[i] is the largest r_i of the basis's algebra (a profile); R beyond it are not enumerated."""
    sc = np.zeros(MAX_LEN, dtype=np.int64)
    k = unpack_into(s_word, sc, 0)
    s = np.zeros(MAX_LEN + 1, dtype=np.int64)
    sdeg = 0
    for j in range(1, k + 1):
        s[j] = sc[j - 1]
        sdeg += s[j] * ((1 << j) - 1)
    top = 1  # R has at most `top` entries: 2^top - 1 <= n
    while top < MAX_LEN and (1 << (top + 1)) - 1 <= n:
        top += 1
    # Interior cells column by column (only those that fit in degree n), each column closed by its x_0j (i = 0).
    cell_i = np.zeros((MAX_LEN + 1) * (MAX_LEN + 1), dtype=np.int64)
    cell_j = np.zeros((MAX_LEN + 1) * (MAX_LEN + 1), dtype=np.int64)
    ncell = 0
    for j in range(1, k + 1):
        if s[j] > 0:
            for i in range(1, top + 1):
                if (((1 << i) - 1) << j) <= n:
                    cell_i[ncell] = i
                    cell_j[ncell] = j
                    ncell += 1
        cell_j[ncell] = j
        ncell += 1
    value = np.zeros(ncell + 1, dtype=np.int64)
    left = s.copy()                                     # what column j has left for x_0j
    diag = np.zeros(2 * MAX_LEN + 2, dtype=np.int64)    # OR of each anti-diagonal's entries placed so far
    row = np.zeros(MAX_LEN + 1, dtype=np.int64)         # sum_j 2^j x_ij
    first_col = np.zeros(MAX_LEN + 1, dtype=np.int64)   # x_i0
    # Per level of the split: the ranks of R and T from the entries above it, and the degrees they leave.
    r_rank = np.zeros(MAX_LEN + 1, dtype=np.int64)
    r_deg = np.zeros(MAX_LEN + 1, dtype=np.int64)
    t_rank = np.zeros(MAX_LEN + 1, dtype=np.int64)
    t_deg = np.zeros(MAX_LEN + 1, dtype=np.int64)
    budget = n
    made = 0
    c = 0
    fresh = True
    while c >= 0:
        if c == ncell:
            # Split the degree left over x_top0 .. x_20 (x_10 takes the rest), ranking R and T on the way down:
            # the seqno of an element is a sum over its entries from the top (milnor_kernels.rank_of), so each
            # level adds its entry's part to the ranks of the levels above it.
            tr, td = 0, n + sdeg
            for e in range(top + k, top, -1):  # T's entries above R's length come from the interior only
                if diag[e]:
                    step = diag[e] * ((1 << e) - 1)
                    tr += g[td, e - 1] - g[td - step, e - 1]
                    td -= step
            r_rank[top], r_deg[top], t_rank[top], t_deg[top] = 0, n, tr, td
            lv = top
            down = True
            rest = budget
            while lv <= top:
                if lv == 1:
                    if (rest & diag[1]) == 0 and rest + row[1] <= caps[1]:
                        rr, rt = r_rank[1], t_rank[1]
                        if index_map.shape[0] > 0:
                            rr = index_map[map_offset[n] + rr]
                            rt = index_map[map_offset[n + sdeg] + rt]
                        out[rr, rt >> 6] ^= np.uint64(1) << np.uint64(rt & 63)
                        made += 1
                    lv += 1
                    down = False
                    continue
                unit = (1 << lv) - 1
                busy = diag[lv]
                if down:
                    v = 0
                else:
                    rest += first_col[lv] * unit
                    v = ((first_col[lv] | busy) + 1) & ~busy
                if v * unit <= rest and v + row[lv] <= caps[lv]:
                    first_col[lv] = v
                    rest -= v * unit
                    rr, rd = r_rank[lv], r_deg[lv]
                    entry = v + row[lv]
                    if entry:
                        rr += g[rd, lv - 1] - g[rd - entry * unit, lv - 1]
                        rd -= entry * unit
                    tr, td = t_rank[lv], t_deg[lv]
                    entry = v | busy
                    if entry:
                        tr += g[td, lv - 1] - g[td - entry * unit, lv - 1]
                        td -= entry * unit
                    lv -= 1
                    r_rank[lv], r_deg[lv], t_rank[lv], t_deg[lv] = rr, rd, tr, td
                    down = True
                else:
                    first_col[lv] = 0
                    lv += 1
                    down = False
            c -= 1
            fresh = False
            continue
        i = cell_i[c]
        j = cell_j[c]
        if i == 0:  # close column j: x_0j is what is left, disjoint from its anti-diagonal
            if fresh and (left[j] & diag[j]) == 0:
                value[c] = left[j]
                diag[j] |= left[j]
                c += 1
                continue
            if not fresh:
                diag[j] ^= value[c]
            c -= 1
            fresh = False
            continue
        d = i + j
        unit = ((1 << i) - 1) << j
        if fresh:
            v = 0
        else:
            old = value[c]
            left[j] += old
            budget += old * unit
            diag[d] ^= old
            row[i] -= old << j
            v = ((old | diag[d]) + 1) & ~diag[d]
        if v <= left[j] and v * unit <= budget and row[i] + (v << j) <= caps[i]:
            left[j] -= v
            budget -= v * unit
            diag[d] |= v
            row[i] += v << j
            value[c] = v
            c += 1
            fresh = True
        else:
            c -= 1
            fresh = False
    return made


@njit(cache=True, nogil=True, inline="always")
def _harvest(bits, row, nw, ranks, used):
    """Append the set bits of bits[row] (clearing them) to ranks from `used`; returns (ranks, new used)."""
    for w in range(nw):
        x = bits[row, w]
        if x == 0:
            continue
        bits[row, w] = 0
        while x != 0:
            ranks, used = append(ranks, used, w * 64 + ctz(x))
            x &= x - np.uint64(1)
    return ranks, used


#: Default largest table (rows x words of its bit matrix) filled by one enumeration for all R at once; a larger one
#: is filled R by R.
WHOLE_TABLE_WORDS = 1 << 22


@njit(cache=True, nogil=True)
def _fill(keys_s, keys_n, flat, flat_offset, caps, whole_words, g, index_map, map_offset):
    """Every table of the given keys: for each R of degree n (basis order), the ranks of the terms of P(R) P(S).

    The terms land in a bit matrix (terms that meet twice cancel there), from which each row's set bits are its
    ranks: by one enumeration for the whole table (_table_terms) or, for a table too large for its bit matrix,
    product by product into one scratch row. Returns where each key's row offsets and ranks start, then the
    offsets (local to each table) and the ranks."""
    nkeys = keys_s.shape[0]
    row_start, row_off, res_start, ranks = table_starts(keys_n, flat_offset)
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    # multiply_into's arguments typed as _batch_kernel's (not the literal 0 nor the read-only global NO_FORBID),
    # so both callers share one compiled copy: a second one cost a first run 2.0 s of compiling.
    zero = np.int64(0)
    forbid = np.zeros(FORBID_LEN, dtype=np.int64)
    used = 0
    for j in range(nkeys):
        n = keys_n[j]
        s = keys_s[j]
        d = n + word_degree(s)
        nw = max(1, (flat_offset[d + 1] - flat_offset[d] + 63) >> 6)
        first = used
        base = row_start[j]
        dim_n = row_start[j + 1] - base - 1
        whole = dim_n * nw <= whole_words
        bits = np.zeros((dim_n if whole else 1, nw), dtype=np.uint64)
        if whole:
            _table_terms(bits, s, n, caps, g, index_map, map_offset)
        for r in range(dim_n):
            row_off[base + r] = used - first
            if whole:
                ranks, used = _harvest(bits, r, nw, ranks, used)
            elif multiply_into(bits, zero, zero, flat[flat_offset[n] + r], s, d, g, index_map, map_offset, empty,
                               forbid, scratch):
                ranks, used = _harvest(bits, 0, nw, ranks, used)
        row_off[base + dim_n] = used - first
        res_start[j + 1] = used
    return row_start, res_start, row_off, ranks[:used]


class ProductTables:
    """The tables of one basis: the Milnor basis of A or of a profile algebra (p = 2 or odd), or its unstable order.

    The tables' bytes and the log of their keys are an Arena (algebra.milnor.table_arena), private to this process
    or, after share_between_processes, shared with the worker processes forked from it; the key hash that finds
    them is this object's own, brought up to date from the log (_catch_up). A key is claimed in the log before its
    table is filled, so no table is filled twice on the machine: a batch meeting a key that another thread or
    process is filling enumerates its products meanwhile (making it twice would double its bytes)."""

    def __init__(self, basis, budget: int | None = None) -> None:
        self.basis = basis
        self.budget = budget_bytes() if budget is None else budget
        self._arena = Arena(self.budget)
        self._keys = _empty_keys(1 << 12)
        self._nkeys = 0  # slots taken in _keys
        self._seen = 0   # log entries taken into _keys
        self._snap = self._snapshot(0)
        #: Tables with a bit matrix up to this many words are filled by one enumeration, larger ones R by R.
        self.whole_table_words = WHOLE_TABLE_WORDS
        #: A table with this many terms or more is not kept (16-bit row offsets).
        self.max_terms = MAX_RANKED
        #: Entries are ranks T at p = 2; at odd p, T | (c - 1) << rank_bits with the term's coefficient c.
        self.rank_bits = 16 - coef_bits(basis.prime)
        #: caps[i]: the largest r_i in the basis's algebra (index 0 unused; p = 2's filler only).
        self._caps = (np.array([0] + [basis.profile.max_exponent(i) for i in range(MAX_LEN)], dtype=np.int64)
                      if basis.prime == 2 else None)
        #: Tables this process made, and batches that made some (a test hook).
        self.counts = {"tables": 0, "filled_batches": 0}

    @property
    def nbytes(self) -> int:
        """Bytes the tables hold: row offsets, ranks, table starts, the log and this process's key hash."""
        c = self._arena.counters
        return int(2 * c[ROWS] + 2 * c[RANKS] + 16 * c[TABLES] + 16 * c[LOGGED]) + 16 * len(self._keys)

    @property
    def _full(self) -> bool:
        return bool(self._arena.counters[FULL])

    def snapshot(self) -> Snapshot:
        return self._snap

    def limit(self, budget: int) -> None:
        """Lower the budget (a run's memory budget leaves the tables this much); tables past it are not made, in any
        process sharing them. The tables kept stay."""
        with self._arena.lock:
            self.budget = min(self.budget, int(budget))
            if self.nbytes >= self.budget:
                self._arena.counters[FULL] = 1

    def share_between_processes(self) -> None:
        """Move the tables to memory shared with processes forked from now on, so that what one of them fills every
        other reads (nassau.engine.processes). Kept private if the system gives too little shared memory, or no
        process-shared lock (a system without POSIX semaphores): each worker then fills its own."""
        with self._arena.lock:
            if self._arena.shared:
                return
            try:
                arena = self._arena.shared_copy(self.budget)
            except (OSError, ImportError):
                return
            if arena is not None:
                self._arena = arena
                self._snap = self._snapshot(self._snap.ntables)

    def _snapshot(self, ntables: int) -> Snapshot:
        a = self._arena
        return Snapshot(self._keys, ntables, a.tab_rows, a.tab_res, a.row_off, a.ranks)

    def _catch_up(self) -> None:
        """Take the log's new entries into this process's key hash (rehashed into a larger one when half full) and
        name the tables kept so far in a new snapshot; under the arena's lock."""
        a = self._arena
        logged = int(a.counters[LOGGED])
        if logged > self._seen:
            words = a.log[self._seen:logged]
            if 2 * (self._nkeys + len(words)) > len(self._keys):
                self._keys = _rehash(self._keys, 2 * (self._nkeys + len(words)))
            self._nkeys += _insert(self._keys, words)
            self._seen = logged
        self._snap = self._snapshot(int(a.counters[TABLES]))

    def _log(self, s_words, n_degs, tids) -> bool:
        """Append keys with their table ids (or _FILLING, _TOO_LARGE) to the log and catch up; under the lock."""
        ok = self._arena.append(_words(s_words, n_degs, tids))
        self._catch_up()
        return ok

    def _nothing_to_find(self) -> bool:
        """No tables to make or read (tables off), or none to make yet (a first run's helper process is compiling
        this module's kernels, which take 5 s to compile here: algebra.milnor.warmup): the batch kernel looks up
        what there is itself."""
        return helper_compiling() or (self._full and self._snap.ntables == 0)

    def ensure(self, row_deg, row_terms, term_start, term_s, term_sdeg) -> tuple[Snapshot, np.ndarray]:
        """Make the tables this batch needs and does not have (while the budget lasts); return a snapshot and the
        table of every term of every run of rows (the batch kernel's walk order, see _block_keys) in it."""
        if self._nothing_to_find():
            return self._snap, _NO_TIDS
        return self.ensure_keys(*_block_keys(row_deg, row_terms, term_start, term_s, term_sdeg))

    def ensure_keys(self, s_words, n_degs, s_degs) -> tuple[Snapshot, np.ndarray]:
        """Make the tables of these keys (S, deg R; deg S beside) that are missing, while the budget lasts; return
        a snapshot and each key's table in it (-1: enumerate, NOT_KEPT: too large to keep; no entries at all when
        there is nothing to find)."""
        if self._nothing_to_find():
            return self._snap, _NO_TIDS
        if self._arena.counters[LOGGED] != self._seen:  # another process (or thread) logged keys meanwhile
            with self._arena.lock:
                self._catch_up()
        snap = self._snap
        basis = self.basis
        tids, miss_s, miss_n = _key_tables(s_words, n_degs, s_degs, snap.keys, snap.ntables, basis.flat_offset,
                                           1 << self.rank_bits)
        if len(miss_s) == 0 or self._full:
            return snap, tids
        new_s, new_n = self._claim(miss_s, miss_n)
        if len(new_s):
            try:
                made = self._fill(new_s, new_n)
            except BaseException:
                with self._arena.lock:  # let them go: a later batch may make them
                    self._log(new_s, new_n, np.full(len(new_s), -1, dtype=np.int64))
                raise
            self._add(new_s, new_n, *made)
        snap = self._snap
        again = np.nonzero(tids == -1)[0]
        tids[again] = _tables_of(snap.keys, snap.ntables, s_words[again], n_degs[again])
        return snap, tids

    def _fill(self, new_s, new_n):
        """The tables of these keys, as _fill lays them out (fill_odd_tables at an odd prime)."""
        basis = self.basis
        if basis.prime == 2:
            return _fill(new_s, new_n, basis.flat, basis.flat_offset, self._caps, self.whole_table_words,
                         basis.rank_g, basis.index_map, basis.index_map_offset)
        lay = basis.layout
        return fill_odd_tables(new_s, new_n, basis.flat, basis.flat_offset, basis.prime, lay.q_bits, lay.tau_degrees,
                               lay.xi_degrees, lay.shifts, lay.masks, basis.sorted_words, basis.sorted_index,
                               binomial_table(basis.prime), workspace(len(lay.shifts)),
                               signature_filter(len(lay.shifts)), self.rank_bits)

    def _claim(self, miss_s, miss_n):
        """The keys this thread is to make: those nobody here or in a sharing process has made or is making."""
        with self._arena.lock:
            self._catch_up()
            mine = np.nonzero(_unclaimed(self._keys, miss_s, miss_n))[0]
            new_s, new_n = miss_s[mine], miss_n[mine]
            if len(new_s) and not self._log(new_s, new_n, np.full(len(new_s), _FILLING, dtype=np.int64)):
                return new_s[:0], new_n[:0]
            return new_s, new_n

    def _add(self, new_s, new_n, row_start, res_start, row_off, ranks) -> None:
        """Keep new tables: their data first, then their keys in the log. A table of max_terms terms or more only
        has its key marked NOT_KEPT; tables past the budget leave their keys claimed (enumerated from then on)."""
        sizes = np.diff(res_start)
        large = sizes >= self.max_terms
        if large.any():
            keep = np.nonzero(~large)[0]
            row_start, res_start, row_off, ranks = _subset(keep, row_start, res_start, row_off, ranks)
            marked_s, marked_n = new_s[large], new_n[large]
            new_s, new_n = new_s[keep], new_n[keep]
        a = self._arena
        with a.lock:
            if large.any():
                self._log(marked_s, marked_n, np.full(len(marked_s), _TOO_LARGE, dtype=np.int64))
            c = a.counters
            if self._full or len(new_s) == 0:
                return
            if (self.nbytes + 2 * len(row_off) + 2 * len(ranks) + 40 * len(new_s) > self.budget
                    or not a.fits(len(new_s), len(row_off), len(ranks), len(new_s))):
                c[FULL] = 1
                return
            first, rows, used = int(c[TABLES]), int(c[ROWS]), int(c[RANKS])
            a.tab_rows[first:first + len(new_s)] = rows + row_start[:-1]
            a.tab_res[first:first + len(new_s)] = used + res_start[:-1]
            a.row_off[rows:rows + len(row_off)] = row_off  # < MAX_RANKED: fits 16 bits
            a.ranks[used:used + len(ranks)] = ranks
            c[ROWS] += len(row_off)
            c[RANKS] += len(ranks)
            c[TABLES] += len(new_s)  # before the keys name them: a snapshot never names a table not yet written
            self._log(new_s, new_n, np.arange(first, first + len(new_s), dtype=np.int64))
            self.counts["tables"] += len(new_s)
            self.counts["filled_batches"] += 1


def _words(s_words, n_degs, tids) -> np.ndarray:
    """Log entries (a key hash slot's two words) for these keys and table ids."""
    words = np.empty((len(s_words), 2), dtype=np.uint64)
    words[:, 0] = s_words
    words[:, 1] = n_degs.astype(np.uint64) | ((tids + 1).astype(np.uint64) << np.uint64(16))
    return words


def _subset(keep, row_start, res_start, row_off, ranks):
    """The tables `keep` (indices) of filled tables given as _fill returns them, renumbered from 0."""
    row_off = np.concatenate([row_off[row_start[k]:row_start[k + 1]] for k in keep] or [row_off[:0]])
    ranks = np.concatenate([ranks[res_start[k]:res_start[k + 1]] for k in keep] or [ranks[:0]])
    row_start = np.concatenate([[0], np.cumsum(np.diff(row_start)[keep])]).astype(np.int64)
    res_start = np.concatenate([[0], np.cumsum(np.diff(res_start)[keep])]).astype(np.int64)
    return row_start, res_start, row_off, ranks


def _empty_keys(cap: int) -> np.ndarray:
    keys = np.zeros((cap, 2), dtype=np.uint64)
    keys[:, 0] = _EMPTY
    return keys


def _rehash(keys: np.ndarray, cap_at_least: int) -> np.ndarray:
    grown = _empty_keys(1 << max(12, (cap_at_least - 1).bit_length()))
    _insert(grown, keys[keys[:, 0] != _EMPTY])
    return grown


_REGISTRY_LOCK = threading.Lock()


def kept_on(basis, attribute: str, make: Callable[[], object]):
    """basis.<attribute>, made by make() on first use (one per basis object, shared by every thread)."""
    kept = getattr(basis, attribute, None)
    if kept is None:
        with _REGISTRY_LOCK:
            kept = getattr(basis, attribute, None)
            if kept is None:
                kept = make()
                setattr(basis, attribute, kept)
    return kept


def tables_for(basis) -> ProductTables:
    """The basis's tables, made on first use (one set per basis object, shared by every thread)."""
    return kept_on(basis, "_product_tables", lambda: ProductTables(basis))


def use_tables(basis, budget: int) -> ProductTables:
    """Give the basis fresh tables with this byte budget (0: every product enumerated), e.g. to compare both paths."""
    with _REGISTRY_LOCK:
        basis._product_tables = ProductTables(basis, budget)
        return basis._product_tables
