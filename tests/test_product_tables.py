"""Product tables (algebra.milnor.product_tables): products read from a table equal the enumerated ones bit for bit, a
batch met again enumerates nothing, the budget holds, and threads filling tables at once agree."""
from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from algebra.milnor import products
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import degree, pack, unpack
from algebra.milnor.product_tables import MEMORY_SHARE, budget_bytes, machine_memory, use_tables
from algebra.milnor.products import run_batch
from algebra.milnor.profile import a_n
from algebra.unstable.basis import UnstableBasis
from tests.oracles.milnor_naive import multiply_naive
from tests.test_algebra_products import random_batch


def fresh(kind: str, budget: int) -> MilnorBasis | UnstableBasis:
    basis = {"A": lambda: MilnorBasis(), "A(2)": lambda: MilnorBasis(a_n(2)),
             "unstable": lambda: UnstableBasis(MilnorBasis())}[kind]()
    basis.extend(60)
    use_tables(basis, budget)
    return basis


def random_col_map(rng: np.random.Generator, ncols: int) -> tuple[np.ndarray, int]:
    keep = np.nonzero(rng.random(ncols) < 0.6)[0]
    col_map = np.full(ncols, -1, dtype=np.int64)
    col_map[keep] = np.arange(len(keep))
    return col_map, len(keep)


@pytest.mark.parametrize("kind", ["A", "A(2)", "unstable", "A R by R"])
def test_tables_equal_enumeration(rng: np.random.Generator, kind: str) -> None:
    """Fresh random batches (rows of many degrees, shared term lists, a column map or none) give the same bits
    through tables made now, tables made earlier, and no tables at all; the tables filled by one enumeration for
    all R (over A, a profile, the unstable order) or R by R."""
    by_r = kind.endswith("R by R")
    kind = kind.split()[0]
    tabled, direct = fresh(kind, 1 << 30), fresh(kind, 0)
    if by_r:
        tabled._product_tables.whole_table_words = 0
    for trial in range(6):
        batch, ncols = random_batch(rng, tabled, rows=300, lists=20, top=40)
        col_map, width = random_col_map(rng, ncols) if trial % 2 else (None, ncols)
        outs = []
        for basis in (tabled, tabled, direct):
            out = np.zeros((300, (width + 63) // 64), dtype=np.uint64)
            run_batch(out, batch, basis, col_map)
            outs.append(out)
        assert np.array_equal(outs[0], outs[2]) and np.array_equal(outs[1], outs[2]), trial
    assert tabled._product_tables.counts["tables"] > 0 and direct._product_tables.counts["tables"] == 0


@pytest.mark.parametrize("whole", [True, False])
def test_a_table_row_is_milnors_formula(rng: np.random.Generator, whole: bool) -> None:
    """Every row of a table (every R of degree n times one S) against the brute-force formula, the table filled
    by one enumeration for all R or R by R."""
    basis = fresh("A", 1 << 30)
    basis._product_tables.whole_table_words = 1 << 30 if whole else 0
    for _ in range(8):
        n, sdeg = int(rng.integers(1, 24)), int(rng.integers(1, 16))
        s = basis.element(sdeg, int(rng.integers(basis.dimension(sdeg))))
        rows = basis.words(n)
        batch = products.ProductBatch(row_r=rows, row_deg=np.full(len(rows), n), row_terms=np.zeros(len(rows), int),
                                      term_start=np.array([0, 1]), term_s=np.array([pack(s)], dtype=np.uint64),
                                      term_sdeg=np.array([sdeg]), term_col=np.zeros(1, dtype=np.int64))
        dim = basis.dimension(n + sdeg)
        for _ in range(2):  # the first call fills the table, the second reads it
            out = np.zeros((len(rows), (dim + 63) // 64), dtype=np.uint64)
            run_batch(out, batch, basis)
            bits = np.unpackbits(out.view(np.uint8), axis=1, bitorder="little")[:, :dim]
            for r, row in zip(rows, bits, strict=True):
                got = {basis.element(n + sdeg, int(j)) for j in np.nonzero(row)[0]}
                assert got == multiply_naive(unpack(int(r)), s), (unpack(int(r)), s)
        assert degree(s) == sdeg


def test_a_batch_met_again_enumerates_nothing(rng: np.random.Generator) -> None:
    """Structural: the second time, every (row, term) pair is read from a table; a revert to enumerating every
    product shows as products made and no table pairs."""
    basis = fresh("A", 1 << 30)
    batch, ncols = random_batch(rng, basis, rows=400, lists=30, top=40)
    out = np.zeros((400, (ncols + 63) // 64), dtype=np.uint64)
    run_batch(out, batch, basis)
    pairs = int((batch.term_start[batch.row_terms + 1] - batch.term_start[batch.row_terms]).sum())
    before = dict(products.COUNTERS)
    run_batch(np.zeros_like(out), batch, basis)
    assert products.COUNTERS["products"] == before["products"]
    assert products.COUNTERS["table_pairs"] - before["table_pairs"] == pairs
    tables = basis._product_tables.counts["tables"]
    run_batch(np.zeros_like(out), batch, basis)
    assert basis._product_tables.counts["tables"] == tables  # nothing new to make


def test_the_kernel_looks_up_no_table_that_ensure_found(rng: np.random.Generator) -> None:
    """Structural: a batch whose tables ProductTables.ensure found (made now or earlier) is handed each one, so the
    batch kernel looks up none itself (a revert to two lookups per key shows as lookups here), nor with the tables
    off; for a batch too small to find them the kernel looks them up. The bits are the same every way."""
    basis, off = fresh("A", 1 << 30), fresh("A", 0)
    batch, ncols = random_batch(rng, basis, rows=400, lists=30, top=40)
    outs = []
    for which in (basis, basis, off):
        before = products.COUNTERS["table_lookups"]
        outs.append(np.zeros((400, (ncols + 63) // 64), dtype=np.uint64))
        run_batch(outs[-1], batch, which)
        assert products.COUNTERS["table_lookups"] == before
    assert all(np.array_equal(out, outs[2]) for out in outs)
    small = dataclasses.replace(batch, row_r=batch.row_r[:1], row_deg=batch.row_deg[:1], row_terms=batch.row_terms[:1])
    before = products.COUNTERS["table_lookups"]
    run_batch(np.zeros((1, (ncols + 63) // 64), dtype=np.uint64), small, basis)
    terms = int(small.term_start[small.row_terms[0] + 1] - small.term_start[small.row_terms[0]])
    assert products.COUNTERS["table_lookups"] - before == terms > 0


def test_a_small_batch_makes_no_tables_but_reads_those_there_are(rng: np.random.Generator) -> None:
    """Below products.SMALL_BATCH (row, term) pairs a batch skips finding and making tables (a revert shows as
    tables made), gives the enumeration's bits, and reads the tables a larger batch made (table pairs)."""
    basis, direct = fresh("A", 1 << 30), fresh("A", 0)
    for _ in range(20):
        batch, ncols = random_batch(rng, basis, rows=int(rng.integers(1, 6)), lists=2, top=40)
        pairs = int((batch.term_start[batch.row_terms + 1] - batch.term_start[batch.row_terms]).sum())
        assert pairs < products.SMALL_BATCH
        out, want = (np.zeros((len(batch.row_r), (ncols + 63) // 64), dtype=np.uint64) for _ in range(2))
        run_batch(out, batch, basis)
        run_batch(want, batch, direct)
        assert basis._product_tables.counts["tables"] == 0 and (out == want).all()
    big = dataclasses.replace(batch, row_r=np.repeat(batch.row_r, 40), row_deg=np.repeat(batch.row_deg, 40),
                              row_terms=np.repeat(batch.row_terms, 40))
    run_batch(np.zeros((len(big.row_r), (ncols + 63) // 64), dtype=np.uint64), big, basis)
    assert basis._product_tables.counts["tables"] > 0
    before = products.COUNTERS["table_pairs"]
    run_batch(np.zeros_like(out), batch, basis)
    assert products.COUNTERS["table_pairs"] - before == pairs


def test_the_budget_stops_new_tables(rng: np.random.Generator) -> None:
    """Tables stop growing once the next ones would pass the budget; what is not tabled is enumerated, same bits."""
    small, direct = fresh("A", 200_000), fresh("A", 0)
    for _ in range(10):
        batch, ncols = random_batch(rng, small, rows=300, lists=25, top=50)
        a = np.zeros((300, (ncols + 63) // 64), dtype=np.uint64)
        b = np.zeros_like(a)
        run_batch(a, batch, small)
        run_batch(b, batch, direct)
        assert np.array_equal(a, b)
    tables = small._product_tables
    assert 0 < tables.nbytes <= 200_000 and tables._full
    made = tables.counts["tables"]
    batch, ncols = random_batch(rng, small, rows=300, lists=25, top=50)  # its own width: a narrower out overflows
    run_batch(np.zeros((300, (ncols + 63) // 64), dtype=np.uint64), batch, small)
    assert tables.counts["tables"] == made


def test_threads_filling_at_once_agree(rng: np.random.Generator) -> None:
    """Four threads run overlapping batches on one basis while its tables are made: each result equals the
    enumerated one, and no table is made twice (as many as one thread makes)."""
    basis, direct, serial = fresh("A", 1 << 30), fresh("A", 0), fresh("A", 1 << 30)
    work = [random_batch(rng, basis, rows=200, lists=15, top=44) for _ in range(8)]
    expected = []
    for batch, ncols in work:
        out = np.zeros((200, (ncols + 63) // 64), dtype=np.uint64)
        run_batch(out, batch, direct)
        run_batch(np.zeros_like(out), batch, serial)
        expected.append(out)
    bad: list[int] = []

    def worker(order: list[int]) -> None:
        for k in order:
            batch, ncols = work[k]
            out = np.zeros((200, (ncols + 63) // 64), dtype=np.uint64)
            run_batch(out, batch, basis)
            if not np.array_equal(out, expected[k]):
                bad.append(k)

    threads = [threading.Thread(target=worker, args=(list(rng.permutation(8)),)) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert bad == []
    assert basis._product_tables.counts["tables"] == serial._product_tables.counts["tables"] > 0


def test_budget_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NASSAU_PRODUCT_TABLES_MB", raising=False)
    assert budget_bytes() == int(MEMORY_SHARE * machine_memory()) > 0
    monkeypatch.setenv("NASSAU_PRODUCT_TABLES_MB", "2")
    assert budget_bytes() == 2 << 20
    monkeypatch.setenv("NASSAU_PRODUCT_TABLES_MB", "0")
    assert budget_bytes() == 0
    monkeypatch.setenv("NASSAU_PRODUCT_TABLES_MB", "lots")
    with pytest.raises(ValueError, match="NASSAU_PRODUCT_TABLES_MB"):
        budget_bytes()


def test_a_steps_term_tables_give_the_same_matrices(rng: np.random.Generator) -> None:
    """FreeMap.term_tables (each term's table found once for a degree) against building without them and without
    any tables, on fresh random row subsets of a resolution's differentials; a wrong degree is refused."""
    from tests.helpers import run_engine

    res, _ = run_engine("S_2", max_t=36, max_s=6, algorithm="nassau")
    direct = fresh("A", 0)
    for _ in range(12):
        s, t = int(rng.integers(1, 7)), int(rng.integers(10, 37))
        d, fs = res.differential(s), res.free(s)
        ngens = fs.gens_below(t)
        dim = fs.dimension(t, ngens)
        if dim == 0:
            continue
        rows = np.sort(rng.choice(dim, size=min(dim, int(rng.integers(1, 40))), replace=False)).astype(np.int64)
        target_ngens = res.free(s - 1).gens_below(t)
        tables = d.term_tables(t, ngens)
        fast = d.matrix(t, rows, target_ngens, tables=tables)
        assert np.array_equal(fast, d.matrix(t, rows, target_ngens))
        batch = d.batch(t, rows)
        slow = np.zeros_like(fast)
        run_batch(slow, batch, direct, d.target.excess_columns(t, target_ngens))
        assert np.array_equal(fast, slow)
        with pytest.raises(ValueError, match="degree"):
            d.matrix(t + 1, rows, target_ngens, tables=tables)


def test_a_table_too_large_to_keep_is_enumerated_and_not_made_again(rng: np.random.Generator) -> None:
    """Tables of max_terms terms or more (65536: 16-bit row offsets) are not kept: their keys answer NOT_KEPT, their
    products are enumerated with the same bits, and meeting them again makes nothing."""
    from algebra.milnor.product_tables import NOT_KEPT, lookup

    basis, direct = fresh("A", 1 << 30), fresh("A", 0)
    tables = basis._product_tables
    tables.max_terms = 40
    batch, ncols = random_batch(rng, basis, rows=300, lists=20, top=44)
    outs = []
    for basis_ in (basis, basis, direct):
        out = np.zeros((300, (ncols + 63) // 64), dtype=np.uint64)
        run_batch(out, batch, basis_)
        outs.append(out)
    assert np.array_equal(outs[0], outs[2]) and np.array_equal(outs[1], outs[2])
    snap = tables.snapshot()
    found = [lookup(snap.keys, batch.term_s[q], n, snap.ntables)  # every term of every row
             for lst, n in zip(batch.row_terms, batch.row_deg, strict=True)
             for q in range(batch.term_start[lst], batch.term_start[lst + 1])]
    assert NOT_KEPT in found and any(tid >= 0 for tid in found)
    made, before = tables.counts["tables"], dict(products.COUNTERS)
    run_batch(np.zeros_like(outs[0]), batch, basis)
    assert tables.counts["tables"] == made and products.COUNTERS["products"] > before["products"]


def test_the_key_hash_grows_and_keeps_every_key_and_its_table(rng: np.random.Generator) -> None:
    """A real resolution outgrows the key hash (4096 slots, grown when half full); random batches never do. Here
    tables are made, then 5000 more keys are added in rounds (kept as too large, so no table is made for them): the
    hash grows, stays at most half full, and every key still answers its own table (a table id shifted by the
    rehash would read another key's products); products read after the growth are the enumerated ones."""
    from algebra.milnor import product_tables as pt
    from algebra.milnor.product_tables import NOT_KEPT, lookup

    basis, direct = fresh("A", 1 << 30), fresh("A", 0)
    tables = basis._product_tables
    batch, ncols = random_batch(rng, basis, rows=300, lists=20, top=40)
    run_batch(np.zeros((300, (ncols + 63) // 64), dtype=np.uint64), batch, basis)
    keys = sorted({(int(batch.term_s[q]), int(n)) for lst, n in zip(batch.row_terms, batch.row_deg, strict=True)
                   for q in range(batch.term_start[lst], batch.term_start[lst + 1])})
    snap = tables.snapshot()
    before = {k: lookup(snap.keys, np.uint64(k[0]), k[1], snap.ntables) for k in keys}
    assert sum(tid >= 0 for tid in before.values()) > 20 and len(snap.keys) == 1 << 12
    fake = [(np.uint64(1 << 40) + np.uint64(i), 1000 + i % 7) for i in range(5000)]  # no batch meets these
    for start in range(0, len(fake), 700):
        chunk = fake[start:start + 700]
        with tables._arena.lock:
            tables._log(np.array([s for s, _ in chunk], dtype=np.uint64),
                        np.array([n for _, n in chunk], dtype=np.int64), np.full(len(chunk), pt._TOO_LARGE))
    snap = tables.snapshot()
    assert len(snap.keys) >= 2 * (len(keys) + len(fake))
    assert {k: lookup(snap.keys, np.uint64(k[0]), k[1], snap.ntables) for k in keys} == before
    assert all(lookup(snap.keys, s, n, snap.ntables) == NOT_KEPT for s, n in fake)
    made = tables.counts["tables"]
    outs = []
    for b in (basis, direct):
        out = np.zeros((300, (ncols + 63) // 64), dtype=np.uint64)
        run_batch(out, batch, b)
        outs.append(out)
    assert np.array_equal(outs[0], outs[1]) and tables.counts["tables"] == made


def test_a_free_slot_taken_by_the_same_s_in_another_degree_is_not_read_as_the_key() -> None:
    """A reader's probe can end at a free slot that a thread fills meanwhile with another key; if it has the same S
    and another degree of R, lookup must not take its table (the race the threads could meet)."""
    from algebra.milnor import product_tables as pt

    keys = pt._empty_keys(1 << 12)
    s_word, n = np.uint64(5), 7
    at = pt._slot(keys, s_word, n)  # free: where (S, 7) would go
    keys[at, 1] = np.uint64(n + 1) | (np.uint64(3 + 1) << np.uint64(16))  # (S, 8) with table 3, as a writer leaves it
    keys[at, 0] = s_word
    assert pt._table_at(keys, at, s_word, n, 10) == -1  # the probe found `at` free, then the writer took it
    assert pt.lookup(keys, s_word, n, 10) == -1
