"""Product tables at odd primes (algebra.milnor.product_tables, odd_kernels.fill_odd_tables): each entry a term's rank
with its coefficient; products read from tables equal the enumerated ones and Milnor's formula, a batch met again
enumerates nothing, and a resolution reads them with the same chart."""
from __future__ import annotations

import numpy as np
import pytest

from algebra.milnor import products
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.odd_kernels import coef_bits
from algebra.milnor.product_tables import use_tables
from algebra.milnor.products import ProductBatch, run_batch
from algebra.milnor.profile import FULL, Profile
from algebra.milnor.table_arena import RANKS
from tests.helpers import differentials, run_engine
from tests.oracles.milnor_odd_naive import multiply_naive_odd


def fresh(p: int, budget: int, profile: Profile = FULL) -> OddMilnorBasis:
    basis = OddMilnorBasis(p, profile)
    basis.extend(160)
    use_tables(basis, budget)
    return basis


def element(rng: np.random.Generator, basis: OddMilnorBasis, top: int) -> tuple[int, tuple]:
    while True:
        d = int(rng.integers(0, top))
        if basis.dimension(d):
            return basis.element(d, int(rng.integers(basis.dimension(d))))


def random_batch(rng: np.random.Generator, basis: OddMilnorBasis, rows: int, lists: int,
                 top: int) -> tuple[ProductBatch, int]:
    """Rows of many degrees, each with one of `lists` term lists (coefficients 1..p-1, a block per term wide enough
    for every product it can meet), some rows sent to the same output row."""
    lay = basis.layout
    term_start, term_s, term_sdeg, term_col, term_coef, col = [0], [], [], [], [], 0
    for _ in range(lists):
        for _ in range(int(rng.integers(1, 5))):
            y = element(rng, basis, top)
            term_s.append(lay.pack(*y))
            term_sdeg.append(basis.degree(y))
            term_coef.append(int(rng.integers(1, basis.prime)))
            term_col.append(col)
            col += max(basis.dimension(d + basis.degree(y)) for d in range(top))
        term_start.append(len(term_s))
    left = [element(rng, basis, top) for _ in range(rows)]
    # Rows sorted by (list, degree) as a step lays them out, so runs of rows share their tables.
    order = sorted(range(rows), key=lambda i: (i % lists, basis.degree(left[i])))
    batch = ProductBatch(row_r=np.array([lay.pack(*left[i]) for i in order], dtype=np.uint64),
                         row_deg=np.array([basis.degree(left[i]) for i in order], dtype=np.int64),
                         row_terms=np.array([i % lists for i in order], dtype=np.int64),
                         term_start=np.array(term_start, dtype=np.int64), term_s=np.array(term_s, dtype=np.uint64),
                         term_sdeg=np.array(term_sdeg), term_col=np.array(term_col, dtype=np.int64),
                         term_coef=np.array(term_coef), row_out=rng.integers(0, rows // 2, size=rows))
    return batch, col


@pytest.mark.parametrize("p", [3, 5, 7])
def test_tables_equal_enumeration_and_milnors_formula(rng: np.random.Generator, p: int) -> None:
    """Fresh random batches (coefficients, shared output rows, a column map or none) give the same F_p rows through
    tables made now, tables made earlier, and no tables; the enumerated rows equal Milnor's formula product by
    product (the oracle), and some table entry carries a coefficient other than 1."""
    tabled, direct = fresh(p, 1 << 28), fresh(p, 0)
    for trial in range(4):
        batch, ncols = random_batch(rng, tabled, rows=120, lists=8, top=70)
        col_map, width = None, ncols
        if trial % 2:
            keep = np.nonzero(rng.random(ncols) < 0.6)[0]
            col_map, width = np.full(ncols, -1, dtype=np.int64), len(keep)
            col_map[keep] = np.arange(len(keep))
        outs = []
        for basis in (tabled, tabled, direct):
            outs.append(np.zeros((60, width), dtype=np.uint8))
            run_batch(outs[-1], batch, basis, col_map)
        assert np.array_equal(outs[0], outs[2]) and np.array_equal(outs[1], outs[2]), trial
    assert tabled._product_tables.counts["tables"] > 0 and direct._product_tables.counts["tables"] == 0
    # The oracle, on the last batch without its column map: each row's products summed by Milnor's formula.
    want = np.zeros((60, ncols), dtype=np.int64)
    for r, (word, out_row, lst) in enumerate(zip(batch.row_r, batch.row_out, batch.row_terms, strict=True)):
        x = tabled.layout.unpack(int(word))
        for q in range(batch.term_start[lst], batch.term_start[lst + 1]):
            y = tabled.layout.unpack(int(batch.term_s[q]))
            for z, c in multiply_naive_odd(p, x, y).items():
                want[out_row, batch.term_col[q] + tabled.index(z)] += c * int(batch.term_coef[q])
    got = np.zeros((60, ncols), dtype=np.uint8)
    run_batch(got, batch, tabled)
    assert np.array_equal(got, want % p)
    tables = tabled._product_tables
    entries = tables._arena.ranks[:tables._arena.counters[RANKS]]
    assert (entries >> tables.rank_bits).any()


def test_a_batch_met_again_enumerates_nothing(rng: np.random.Generator) -> None:
    """Structural: the second time every (row, term) pair is read from a table (a revert to enumerating at odd p shows
    as products made and no table pairs), and nothing new is made."""
    basis = fresh(3, 1 << 28)
    batch, ncols = random_batch(rng, basis, rows=200, lists=10, top=60)
    run_batch(np.zeros((100, ncols), dtype=np.uint8), batch, basis)
    pairs = int((batch.term_start[batch.row_terms + 1] - batch.term_start[batch.row_terms]).sum())
    before, tables = dict(products.COUNTERS), basis._product_tables.counts["tables"]
    run_batch(np.zeros((100, ncols), dtype=np.uint8), batch, basis)
    assert products.COUNTERS["products"] == before["products"]
    assert products.COUNTERS["table_pairs"] - before["table_pairs"] == pairs
    assert basis._product_tables.counts["tables"] == tables


def test_degrees_too_large_for_the_entries_are_enumerated(rng: np.random.Generator) -> None:
    """A product landing in a degree with more elements than an entry can rank is enumerated, not tabled: with
    6-bit ranks (64 elements) the large degrees are left out, the small ones tabled, the rows the same."""
    small, direct = fresh(5, 1 << 28), fresh(5, 0)
    small._product_tables.rank_bits = 6
    batch, ncols = random_batch(rng, small, rows=200, lists=10, top=80)
    a, b = (np.zeros((100, ncols), dtype=np.uint8) for _ in range(2))
    made = products.COUNTERS["products"]
    run_batch(a, batch, small)
    run_batch(b, batch, direct)
    assert np.array_equal(a, b)
    assert products.COUNTERS["products"] > made and small._product_tables.counts["tables"] > 0


def test_coefficient_bits() -> None:
    """An entry's coefficient field holds 1..p-1: one bit at p = 3, two at 5, three at 7, none at p = 2."""
    assert [coef_bits(p) for p in (2, 3, 5, 7, 11)] == [0, 1, 2, 3, 4]


def test_a_resolution_reads_tables_and_gives_the_same_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    """S_3 by both algorithms (Nassau's signature blocks, the standard matrices) reads table pairs, and its
    differentials are those of a run with every product enumerated (tables off), bit for bit."""
    for algorithm in ("nassau", "standard"):
        with monkeypatch.context() as m:
            m.setenv("NASSAU_PRODUCT_TABLES_MB", "0")
            before = products.COUNTERS["table_pairs"]
            plain, _ = run_engine("S_3", stem=60, max_s=12, algorithm=algorithm)
            assert products.COUNTERS["table_pairs"] == before
        res, _ = run_engine("S_3", stem=60, max_s=12, algorithm=algorithm)
        assert products.COUNTERS["table_pairs"] > before
        assert differentials(res, 12) == differentials(plain, 12)
