"""Milnor products: the compiled kernels against Milnor's formula done by brute force, and the algebra laws."""
from __future__ import annotations

import threading
from math import comb

import numpy as np
import pytest

from algebra.milnor import products
from algebra.milnor.admissible_master import AdmissibleMaster, admissible_batch_kernel
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import degree, pack, unpack
from algebra.milnor.products import ProductBatch, multiply_one, run_batch
from algebra.milnor.profile import a_n
from fp.packed import from_bool
from tests.oracles.milnor_naive import multiply_naive

BASIS = MilnorBasis()
BASIS.extend(80)


def as_set(basis: MilnorBasis, d: int, row: np.ndarray) -> set[tuple[int, ...]]:
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")[: basis.dimension(d)]
    return {basis.element(d, int(i)) for i in np.nonzero(bits)[0]}


def times(a: set, b: set) -> set:
    """Product of two sums of basis elements, through the compiled one-at-a-time product."""
    out: set = set()
    for r in a:
        for s in b:
            out ^= as_set(BASIS, degree(r) + degree(s), multiply_one(BASIS, r, s))
    return out


def random_element(rng: np.random.Generator, d: int, basis: MilnorBasis = BASIS) -> tuple[int, ...]:
    return basis.element(d, int(rng.integers(basis.dimension(d))))


def test_known_products() -> None:
    sq = lambda n: {(n,)} if n else {()}  # noqa: E731
    assert times(sq(1), sq(1)) == set()
    assert times(sq(2), sq(2)) == times(sq(3), sq(1)) == {(1, 1)}
    assert times(sq(1), sq(2)) == sq(3)
    assert times(sq(2), sq(1)) == {(3,), (0, 1)}
    assert times({(0, 1)}, {(0, 1)}) == set()  # Q_1 is exterior
    assert times(sq(1), {(0, 1)}) == {(1, 1)}


def test_kernel_equals_brute_force_formula(rng: np.random.Generator) -> None:
    for _ in range(1500):
        r = random_element(rng, int(rng.integers(0, 32)))
        s = random_element(rng, int(rng.integers(0, 32)))
        d = degree(r) + degree(s)
        assert as_set(BASIS, d, multiply_one(BASIS, r, s)) == multiply_naive(r, s), (r, s)


def test_unit_and_associativity(rng: np.random.Generator) -> None:
    for _ in range(150):
        a, b, c = ({random_element(rng, int(rng.integers(0, 22)))} for _ in range(3))
        assert times({()}, a) == a == times(a, {()})
        assert times(times(a, b), c) == times(a, times(b, c)), (a, b, c)


@pytest.mark.parametrize("b", range(1, 13))
def test_adem_relations(b: int) -> None:
    for a in range(1, 2 * b):
        rhs: set = set()
        for c in range(a // 2 + 1):
            if comb(b - c - 1, a - 2 * c) % 2:
                rhs ^= times({(a + b - c,)}, {(c,)} if c else {()})
        assert times({(a,)}, {(b,)}) == rhs, (a, b)


def random_batch(rng: np.random.Generator, basis: MilnorBasis, rows: int, lists: int, top: int) -> tuple:
    """A batch of random products: each row's R has its own degree, and each term gets a block wide enough for
    the largest product degree it can meet."""
    term_start, term_s, term_sdeg, term_col = [0], [], [], []
    col = 0
    for _ in range(lists):
        for _ in range(int(rng.integers(1, 6))):
            sdeg = int(rng.integers(0, top // 2))
            term_s.append(pack(random_element(rng, sdeg, basis)) if basis.dimension(sdeg) else 0)
            term_sdeg.append(sdeg if basis.dimension(sdeg) else 0)
        term_start.append(len(term_s))
    row_terms = rng.integers(0, lists, size=rows)
    row_deg = rng.integers(0, top // 2, size=rows)
    row_r = np.array([pack(random_element(rng, int(d), basis)) if basis.dimension(int(d)) else 0 for d in row_deg],
                     dtype=np.uint64)
    row_deg = np.array([d if basis.dimension(int(d)) else 0 for d in row_deg], dtype=np.int64)
    # Column blocks: one per term, wide enough for the largest product degree it can produce.
    for q in range(len(term_s)):
        term_col.append(col)
        col += max(basis.dimension(int(d) + term_sdeg[q]) for d in range(top // 2))
    batch = ProductBatch(row_r=row_r, row_deg=row_deg, row_terms=row_terms.astype(np.int64),
                         term_start=np.array(term_start, dtype=np.int64), term_s=np.array(term_s, dtype=np.uint64),
                         term_sdeg=np.array(term_sdeg, dtype=np.int64), term_col=np.array(term_col, dtype=np.int64))
    return batch, col


def one_at_a_time(batch: ProductBatch, basis: MilnorBasis, ncols: int) -> np.ndarray:
    """The twin, with no compiled code: every product by Milnor's formula (milnor_naive), each term placed by its
    position in the basis list of its degree, XOR-ed into its block."""
    out = np.zeros((len(batch.row_r), ncols), dtype=bool)
    for i, (rw, rd, lst) in enumerate(zip(batch.row_r, batch.row_deg, batch.row_terms, strict=True)):
        for q in range(batch.term_start[lst], batch.term_start[lst + 1]):
            d = int(rd + batch.term_sdeg[q])
            position = {int(w): k for k, w in enumerate(basis.words(d))}
            for t in multiply_naive(unpack(int(rw)), unpack(int(batch.term_s[q]))):
                out[i, batch.term_col[q] + position[pack(t)]] ^= True
    return from_bool(out)


@pytest.mark.parametrize("profile", [None, a_n(2)])
def test_batch_equals_one_at_a_time(rng: np.random.Generator, profile) -> None:
    basis = BASIS if profile is None else MilnorBasis(profile)
    basis.extend(60)
    batch, ncols = random_batch(rng, basis, rows=300, lists=25, top=40 if profile is None else 22)
    expected = one_at_a_time(batch, basis, ncols)
    out = np.zeros_like(expected)
    run_batch(out, batch, basis)
    assert np.array_equal(out, expected)
    # The admissible-matrix form over the cached master gives the same bits.
    master = AdmissibleMaster()
    slots = master.ensure(batch.row_r)
    start, count, cs, mk = master.arrays()
    out2 = np.zeros_like(expected)
    admissible_batch_kernel(out2, slots, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s,
                            batch.term_sdeg, batch.term_col, start, count, cs, mk, basis.rank_g, basis.index_map,
                            basis.index_map_offset, np.zeros(0, dtype=np.int64))
    assert np.array_equal(out2, expected)


def test_column_map_restricts_output(rng: np.random.Generator) -> None:
    batch, ncols = random_batch(rng, BASIS, rows=100, lists=10, top=30)
    full = np.zeros((100, (ncols + 63) // 64), dtype=np.uint64)
    run_batch(full, batch, BASIS)
    keep = np.sort(rng.choice(ncols, size=ncols // 3, replace=False))
    col_map = np.full(ncols, -1, dtype=np.int64)
    col_map[keep] = np.arange(len(keep))
    masked = np.zeros((100, (len(keep) + 63) // 64), dtype=np.uint64)
    run_batch(masked, batch, BASIS, col_map)
    full_bits = np.unpackbits(full.view(np.uint8), axis=1, bitorder="little")[:, keep]
    masked_bits = np.unpackbits(masked.view(np.uint8), axis=1, bitorder="little")[:, : len(keep)]
    assert np.array_equal(full_bits, masked_bits)


def test_master_caches_each_left_factor_once() -> None:
    master = AdmissibleMaster()
    words = BASIS.words(40)
    master.ensure(words)
    used = master.num_matrices
    assert len(master.index) == len(words) and used > len(words)
    master.ensure(words[::-1])
    assert master.num_matrices == used


def test_batch_is_one_compiled_call(rng: np.random.Generator) -> None:
    batch, ncols = random_batch(rng, BASIS, rows=500, lists=40, top=40)
    before = dict(products.COUNTERS)
    run_batch(np.zeros((500, (ncols + 63) // 64), dtype=np.uint64), batch, BASIS)
    assert products.COUNTERS["batch_calls"] == before["batch_calls"] + 1
    served = products.COUNTERS["products"] + products.COUNTERS["table_pairs"]
    assert served > before["products"] + before["table_pairs"]


def test_the_batch_kernel_releases_the_gil() -> None:
    """While one thread's batch runs, this thread keeps running Python and counts the times it finds the batch's
    output partly written. A kernel holding the GIL lets it look only before and after, so it would count none."""
    degree_r, degree_s, copies = 30, 30, 100
    r_words, s_words = np.tile(BASIS.words(degree_r), copies), BASIS.words(degree_s)
    batch = ProductBatch(row_r=r_words, row_deg=np.full(len(r_words), degree_r, dtype=np.int64),
                         row_terms=np.zeros(len(r_words), dtype=np.int64),
                         term_start=np.array([0, len(s_words)], dtype=np.int64), term_s=s_words,
                         term_sdeg=np.full(len(s_words), degree_s, dtype=np.int64),
                         term_col=np.zeros(len(s_words), dtype=np.int64))
    shape = (len(r_words), (BASIS.dimension(degree_r + degree_s) + 63) // 64)
    final = np.zeros(shape, dtype=np.uint64)
    run_batch(final, batch, BASIS)
    rows = int(final.any(axis=1).sum())
    partly_written = 0
    for _ in range(50):  # tries: this thread may be descheduled through a whole batch (a loaded machine)
        out = np.zeros(shape, dtype=np.uint64)
        worker = threading.Thread(target=run_batch, args=(out, batch, BASIS))
        worker.start()
        while worker.is_alive():
            partly_written += 0 < int(out.any(axis=1).sum()) < rows
        worker.join()
        assert np.array_equal(out, final)
        if partly_written:
            break
    assert partly_written > 0


@pytest.mark.parametrize("profile", [(1,), (2, 1), (3, 2, 1), (4, 3, 2, 1)])
def test_signature_pruning_equals_filtering(rng: np.random.Generator, profile: tuple[int, ...]) -> None:
    """Enumerating only one signature's products gives exactly the full product restricted to its columns, and
    makes fewer products than the full one (with no product tables: they serve a pruned batch unpruned)."""
    from algebra.milnor.kernels import signature_forbid
    from algebra.milnor.product_tables import use_tables
    from algebra.milnor.subalgebra import Subalgebra

    BASIS = MilnorBasis()  # noqa: N806 (this test's own, enumerating every product)
    use_tables(BASIS, 0)

    sub = Subalgebra(profile)
    d_r, rows = 30, 150
    sdegs = [int(x) for x in rng.integers(0, 25, size=12)]
    term_s = [pack(random_element(rng, d)) for d in sdegs]
    blocks = [BASIS.words(d_r + d) for d in sdegs]
    term_col = np.concatenate([[0], np.cumsum([len(b) for b in blocks])[:-1]]).astype(np.int64)
    ncols = int(sum(len(b) for b in blocks))
    batch = ProductBatch(
        row_r=np.array([pack(random_element(rng, d_r)) for _ in range(rows)], dtype=np.uint64),
        row_deg=np.full(rows, d_r, dtype=np.int64), row_terms=rng.integers(0, 3, size=rows).astype(np.int64),
        term_start=np.array([0, 4, 8, 12], dtype=np.int64), term_s=np.array(term_s, dtype=np.uint64),
        term_sdeg=np.array(sdegs, dtype=np.int64), term_col=term_col)
    full = np.zeros((rows, (ncols + 63) // 64), dtype=np.uint64)
    before = products.COUNTERS["products"]
    run_batch(full, batch, BASIS)
    made = products.COUNTERS["products"] - before
    classes = np.concatenate(blocks) & np.uint64(sub.mask)
    for sig in [(), *list(sub.signatures(40))[:8]]:
        keep = np.nonzero(classes == np.uint64(sub.signature_word(sig)))[0]
        col_map = np.full(ncols, -1, dtype=np.int64)
        col_map[keep] = np.arange(len(keep))
        pruned = np.zeros((rows, (len(keep) + 63) // 64), dtype=np.uint64)
        forbid = signature_forbid(profile, sig)
        before = products.COUNTERS["products"]
        run_batch(pruned, batch, BASIS, col_map, forbid)
        made_here = products.COUNTERS["products"] - before
        # Only the signature using every bit of B's profile forbids nothing; every other one prunes.
        assert (made_here < made) if forbid.any() else (made_here == made), sig
        full_bits = np.unpackbits(full.view(np.uint8), axis=1, bitorder="little")[:, keep]
        pruned_bits = np.unpackbits(pruned.view(np.uint8), axis=1, bitorder="little")[:, : len(keep)]
        assert np.array_equal(full_bits, pruned_bits), sig
