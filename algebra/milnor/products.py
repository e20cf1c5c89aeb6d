"""Batched Milnor products: the main interface between free-module maps and the compiled kernels.

A batch is flat arrays: per output row a left factor P(R) and a term list (the right factors P(S), each
with the column offset of its block and its product degree). One compiled call computes every product
of the batch and XORs the results into packed rows. No Python runs per row or per product, which is what
makes matrix building fast; `multiply_one` is the one-at-a-time twin the batch is tested against.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from algebra.milnor.admissible_master import AdmissibleMaster
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.kernels import (
    NO_FORBID,
    SCRATCH,
    flip,
    multiply_into,
    product_into,
    word_rank,
)
from algebra.milnor.odd_basis import Element as OddElement
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.odd_kernels import (
    binomial_table,
    index_of,
    odd_product_into,
    signature_filter,
    workspace,
)
from algebra.milnor.ppart import degree, pack
from algebra.milnor.product_tables import Snapshot, lookup, run_end, tables_for

#: Test hook: how many compiled batch calls and products (terms enumerated, see product_into) have run (a revert to
#: per-row Python shows here), how many (row, term) pairs were read from product tables, how many tables the batch
#: kernel looked up itself, and how many batches the GPU backend took.
COUNTERS = {"batch_calls": 0, "products": 0, "table_pairs": 0, "table_lookups": 0, "device_batches": 0}
#: An empty index array: no row_out (each row to its own), no term tables (look them up).
_NONE = np.zeros(0, dtype=np.int64)
#: Batches of fewer (row, term) pairs make no product tables (see _worth_tables).
SMALL_BATCH = 32
#: The integer type of term degrees in batches and term lists (degrees stay below 2046).
SDEG = np.int16
#: The admissible-matrix cache the GPU path reads (filled only for batches sent to the device).
HOST_MASTER = AdmissibleMaster()


@dataclass
class ProductBatch:
    """Rows of an output matrix, each P(R) times a list of terms.

    row_r[i]: packed R of row i; row_terms[i]: which term list row i uses (index into term_start).
    Term list k spans term_start[k]:term_start[k+1] of term_s (packed S), term_col (column offset of the
    block the product lands in) and term_deg (degree of the product R S; the same for every row using
    the list only if their R have equal degree, so it is stored as deg(S) and the row's deg(R) is added).
    """

    row_r: np.ndarray
    row_deg: np.ndarray
    row_terms: np.ndarray
    term_start: np.ndarray
    term_s: np.ndarray
    term_sdeg: np.ndarray
    term_col: np.ndarray
    #: Coefficient of each term (odd primes; at p = 2 every term is 1 and this stays None).
    term_coef: np.ndarray | None = None
    #: The target generator of each term, for callers that lay out their own columns (None when not needed).
    term_gen: np.ndarray | None = None
    #: The output row each row's products go to (None: row i to out[i]); several rows may share one.
    row_out: np.ndarray | None = None

    def __post_init__(self) -> None:
        # One dtype for the kernels whoever made the batch (each dtype would be compiled apart).
        self.term_sdeg = np.asarray(self.term_sdeg, dtype=SDEG)
        if self.term_coef is not None:
            self.term_coef = np.asarray(self.term_coef, dtype=np.uint8)


@dataclass(frozen=True)
class TermTables:
    """The product tables of a term list's rows in one degree: a snapshot of the tables and each term's table in
    it (-1: enumerated). Made by FreeMap.term_tables, valid for that degree only."""

    degree: int
    snapshot: Snapshot
    tids: np.ndarray


@njit(cache=True, nogil=True, inline="always")
def _run_scratch(nterms):
    """What _next_run fills: each term's table row and entry starts, and (key_tid entries walked, tables looked up)."""
    return np.empty(nterms, dtype=np.int64), np.empty(nterms, dtype=np.int64), np.zeros(2, dtype=np.int64)


@njit(cache=True, nogil=True, inline="always")
def _next_run(i, row_terms, row_deg, term_start, term_s, term_tid, key_tid, keys, ntables, tab_rows, tab_res,
              base_rows, base_res, counts):
    """The run of rows from i with row i's term list and degree n, and where the tables of that list's terms q0..q1
    start for it (-1: enumerate), into base_rows and base_res: read from key_tid (one entry per term of each run,
    from counts[0] on), else from term_tid, else looked up in the snapshot (counted in counts[1]). Returns (end of
    the run, n, q0, q1)."""
    n = row_deg[i]
    q0, q1 = term_start[row_terms[i]], term_start[row_terms[i] + 1]
    for q in range(q0, q1):
        if key_tid.shape[0]:
            tid = key_tid[counts[0]]
            counts[0] += 1
        elif q < term_tid.shape[0]:
            tid = term_tid[q]
        elif ntables == 0:
            tid = -1
        else:
            tid = lookup(keys, term_s[q], n, ntables)
            counts[1] += 1
        base_rows[q] = tab_rows[tid] if tid >= 0 else -1
        base_res[q] = tab_res[tid] if tid >= 0 else -1
    return run_end(row_terms, row_deg, i), n, q0, q1


@njit(cache=True, nogil=True)
def _batch_kernel(out, row_r, row_deg, row_terms, term_start, term_s, term_sdeg, term_col, row_out, term_tid, key_tid,
                  g, index_map, map_offset, col_map, forbid, keys, ntables, tab_rows, tab_res, row_off, ranks):
    """Every product of the batch XOR-ed into out: read from its table where the snapshot has one
    (algebra.milnor.product_tables), else enumerated (product_into, pruned by forbid). An empty snapshot enumerates all.

    Rows are taken in runs of equal (term list, degree of R), so each term's table is found once a run: read from
    key_tid (one entry per term of each run in this order, from ProductTables.ensure), else from term_tid (tables
    for these terms found once for many batches), else looked up (if the snapshot has tables). Row r lands in
    out[row_out[r]] (out[r] when row_out is empty). Returns (terms enumerated, pairs read from tables, tables
    looked up here)."""
    scratch = np.zeros(SCRATCH, dtype=np.int64)
    nrows = row_r.shape[0]
    rank = np.empty(nrows, dtype=np.int64)
    for i in range(nrows):
        rank[i] = word_rank(row_r[i], row_deg[i], g, index_map, map_offset)
    base_rows, base_res, counts = _run_scratch(term_s.shape[0])
    made = hits = i = 0
    while i < nrows:
        j, n, q0, q1 = _next_run(i, row_terms, row_deg, term_start, term_s, term_tid, key_tid, keys, ntables, tab_rows,
                                 tab_res, base_rows, base_res, counts)
        # Row by row: the row's words stay in cache while every term lands in it, and each table is read in
        # rank order, one stream per term.
        for r in range(i, j):
            dest = row_out[r] if row_out.shape[0] else r
            for q in range(q0, q1):
                if base_rows[q] < 0:
                    made += multiply_into(out, dest, term_col[q], row_r[r], term_s[q], n + term_sdeg[q], g, index_map,
                                          map_offset, col_map, forbid, scratch)
                    continue
                at = base_rows[q] + rank[r]
                col0 = term_col[q]
                for k in range(base_res[q] + row_off[at], base_res[q] + row_off[at + 1]):
                    flip(out, dest, col0 + np.int64(ranks[k]), col_map)
                hits += 1
        i = j
    return made, hits, counts[1]


def _worth_tables(batch: ProductBatch) -> bool:
    """Whether to make the tables a batch lacks: finding them costs two compiled calls (~15 us), more than a few
    products take to enumerate (every batch over A(1) has at most 6); a small batch still reads the tables that
    larger ones made."""
    if len(batch.row_deg) >= SMALL_BATCH:
        return True
    starts, lists = batch.term_start, batch.row_terms
    return int((starts[lists + 1] - starts[lists]).sum()) >= SMALL_BATCH


def run_batch(out: np.ndarray, batch: ProductBatch, basis: MilnorBasis, col_map: np.ndarray | None = None,
              forbid: np.ndarray | None = None, tables: TermTables | None = None) -> None:
    """XOR every product of the batch into `out` (rows x words), optionally through a column map.

    col_map (int64, one entry per full column, -1 to drop) restricts the output to a column mask; forbid
    (milnor_kernels.signature_forbid; at odd p odd_kernels.signature_filter) skips products of other signatures while
    enumerating. `tables`, from
    FreeMap.term_tables for the batch's degree, gives each term's product table (no lookups in this batch).
    """
    if len(batch.row_r) == 0:
        return
    cmap = np.zeros(0, dtype=np.int64) if col_map is None else col_map
    if basis.prime != 2:
        _run_odd(out, batch, basis, cmap, forbid, tables)
        return

    def on_cpu(target: np.ndarray) -> None:
        snap, keyed, tids = _snapshot_for(batch, tables, tables_for(basis))
        made, hits, looked = _batch_kernel(target, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start,
                                           batch.term_s, batch.term_sdeg, batch.term_col,
                                           _NONE if batch.row_out is None else batch.row_out, tids, keyed,
                                           basis.rank_g, basis.index_map, basis.index_map_offset, cmap,
                                           NO_FORBID if forbid is None else forbid, *snap)
        _tally(made, hits, looked)

    if batch.row_out is not None or not _on_device(out, batch, basis, col_map, on_cpu):
        on_cpu(out)


def _on_device(out: np.ndarray, batch: ProductBatch, basis: MilnorBasis, col_map: np.ndarray | None,
               on_cpu) -> bool:
    """Hand the batch to the GPU backend when NASSAU_GPU allows it and the batch is large enough.

    The device works from the admissible-matrix form, so the host master is extended for this batch's R
    first (only for batches the device takes). forbid is a CPU shortcut only: col_map alone is exact.
    """
    from gpu.products import takes, try_run_batch

    if not takes(out.size * 64):
        return False

    slots = HOST_MASTER.ensure(batch.row_r)
    start, count, cs, mk = HOST_MASTER.arrays()
    done = try_run_batch(out, batch.row_r, slots, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s,
                         batch.term_sdeg.astype(np.int64), batch.term_col, start, count, cs, mk, basis.rank_g,
                         basis.index_map, basis.index_map_offset, col_map, cpu=on_cpu)
    if done:
        COUNTERS["device_batches"] += 1
    return done


@njit(cache=True, nogil=True)
def _odd_batch_kernel(out, row_r, row_deg, row_terms, term_start, term_s, term_sdeg, term_col, term_coef, row_out,
                      term_tid, key_tid, p, q_bits, shifts, masks, sorted_words, sorted_index, offsets, binom, col_map,
                      ws, keep, rank_bits, keys, ntables, tab_rows, tab_res, row_off, ranks):
    """_batch_kernel at an odd prime: every product of the batch added mod p into the dense rows `out`, read from
    its table (each entry a rank and a coefficient, product_tables) where the snapshot has one, else enumerated
    (odd_product_into, pruned by keep; col_map alone is exact). Returns (terms enumerated, pairs read from tables,
    tables looked up here)."""
    nrows = row_r.shape[0]
    rank_mask = (1 << rank_bits) - 1
    base_rows, base_res, counts = _run_scratch(term_s.shape[0])
    made = hits = i = 0
    while i < nrows:
        j, n, q0, q1 = _next_run(i, row_terms, row_deg, term_start, term_s, term_tid, key_tid, keys, ntables, tab_rows,
                                 tab_res, base_rows, base_res, counts)
        for r in range(i, j):
            dest = row_out[r] if row_out.shape[0] else r
            rank = -1
            for q in range(q0, q1):
                if base_rows[q] < 0:
                    made += odd_product_into(out, dest, term_col[q], term_coef[q], row_r[r], term_s[q],
                                             n + term_sdeg[q], p, q_bits, shifts, masks, sorted_words, sorted_index,
                                             offsets, binom, col_map, ws, keep)
                    continue
                if rank < 0:
                    rank = index_of(row_r[r], n, sorted_words, sorted_index, offsets)
                at = base_rows[q] + rank
                for k in range(base_res[q] + row_off[at], base_res[q] + row_off[at + 1]):
                    e = np.int64(ranks[k])
                    col = term_col[q] + (e & rank_mask)
                    if col_map.shape[0] > 0:
                        col = col_map[col]
                    if col >= 0:
                        out[dest, col] = (out[dest, col] + term_coef[q] * ((e >> rank_bits) + 1)) % p
                hits += 1
        i = j
    return made, hits, counts[1]


def _run_odd(out: np.ndarray, batch: ProductBatch, basis: OddMilnorBasis, cmap: np.ndarray,
             keep: np.ndarray | None, tables: TermTables | None) -> None:
    """Add every product of the batch into the dense F_p rows `out` (p odd), reading the product tables as at p = 2;
    keep (odd_kernels.signature_filter, None: all) drops the products of other signatures early."""
    lay = basis.layout
    if keep is None:
        keep = signature_filter(len(lay.shifts))
    coef = np.ones(len(batch.term_s), dtype=np.uint8) if batch.term_coef is None else batch.term_coef
    found = tables_for(basis)
    snap, keyed, tids = _snapshot_for(batch, tables, found)
    made, hits, looked = _odd_batch_kernel(
        out, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
        batch.term_col, coef, _NONE if batch.row_out is None else batch.row_out, tids, keyed, basis.prime,
        lay.q_bits, lay.shifts, lay.masks, basis.sorted_words, basis.sorted_index, basis.flat_offset,
        binomial_table(basis.prime), cmap, workspace(len(lay.shifts)), keep, found.rank_bits, *snap)
    _tally(made, hits, looked)


def _tally(made: int, hits: int, looked: int) -> None:
    """Count one batch kernel call: the terms it enumerated, the pairs it read from tables, the tables it looked up."""
    COUNTERS["batch_calls"] += 1
    COUNTERS["products"] += int(made)
    COUNTERS["table_pairs"] += int(hits)
    COUNTERS["table_lookups"] += int(looked)


def _snapshot_for(batch: ProductBatch, tables: TermTables | None, found) -> tuple:
    """The snapshot a batch reads, the tables of its runs' terms (ensure's walk order; made first if worth it) and
    those of its term lists (from `tables`), either empty when not known."""
    if tables is not None:
        return tables.snapshot, _NONE, tables.tids
    if _worth_tables(batch):
        snap, keyed = found.ensure(batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg)
        return snap, keyed, _NONE
    return found.snapshot(), _NONE, _NONE


def multiply_odd(basis: OddMilnorBasis, a: OddElement, b: OddElement) -> np.ndarray:
    """Q(E1)P(R) * Q(E2)P(S) as a dense vector mod p in its degree, one product at a time (the twin of the batch)."""
    d = basis.degree(a) + basis.degree(b)
    basis.extend(d)
    lay = basis.layout
    row = np.zeros((1, basis.dimension(d)), dtype=np.uint8)
    odd_product_into(row, 0, 0, 1, np.uint64(lay.pack(*a)), np.uint64(lay.pack(*b)), d, basis.prime, lay.q_bits,
                     lay.shifts, lay.masks, basis.sorted_words, basis.sorted_index, basis.flat_offset,
                     binomial_table(basis.prime), np.zeros(0, dtype=np.int64), workspace(len(lay.shifts)),
                     signature_filter(len(lay.shifts)))
    return row[0]


def multiply(basis: MilnorBasis | OddMilnorBasis, a: object, b: object) -> np.ndarray:
    """a * b as a dense int64 vector of coefficients mod p in its degree (p = 2 or odd)."""
    if basis.prime == 2:
        d = degree(a) + degree(b)
        bits = np.unpackbits(multiply_one(basis, a, b).view(np.uint8), bitorder="little")
        return bits[: basis.dimension(d)].astype(np.int64)
    return multiply_odd(basis, a, b).astype(np.int64)


def multiply_one(basis: MilnorBasis, r: tuple[int, ...], s: tuple[int, ...]) -> np.ndarray:
    """P(R) * P(S) as a packed vector in its degree, one product at a time (the twin of run_batch)."""
    d = degree(r) + degree(s)
    basis.extend(d)
    row = np.zeros((1, (basis.dimension(d) + 63) // 64), dtype=np.uint64)
    product_into(row, 0, 0, np.uint64(pack(r)), np.uint64(pack(s)), d, basis.rank_g, basis.index_map,
                 basis.index_map_offset, np.zeros(0, dtype=np.int64), NO_FORBID, np.zeros(SCRATCH, dtype=np.int64))
    return row[0]
