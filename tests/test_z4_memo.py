"""Kept Z/4 products (algebra.secondary.z4_memo): the same values as enumerating every product (pair_algebra.z4_batch)
on fresh random batches, cold, warm and with no budget; a batch met again enumerates nothing; threads keeping pairs at
once agree, and a free slot holding another pair's value is not read; the d2 lift reads kept pairs (fails if its
composites go back to enumerating every product)."""
from __future__ import annotations

import threading

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.secondary.pair_algebra import binomials_mod4, z4_batch
from algebra.secondary.z4_memo import Z4Memo, use_z4_memo
from tests.test_algebra_products import random_batch


def enumerated(batch, basis: MilnorBasis, ncols: int) -> np.ndarray:
    out = np.zeros((len(batch.row_r), ncols), dtype=np.int8)
    z4_batch(out, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
             batch.term_col, basis.rank_g, basis.index_map, basis.index_map_offset, binomials_mod4())
    return out


def kept(memo, batch, ncols: int) -> np.ndarray:
    out = np.zeros((len(batch.row_r), ncols), dtype=np.int8)
    memo.multiply(out, batch)
    return out


def test_kept_products_equal_enumerated_ones(rng: np.random.Generator) -> None:
    """Random batches (rows of many degrees sharing term lists, so pairs repeat within and across batches): terms
    kept by this batch and by an earlier one give the twin's values."""
    basis = MilnorBasis()
    basis.extend(60)
    memo = use_z4_memo(basis, 1 << 28)
    for trial in range(5):
        batch, ncols = random_batch(rng, basis, rows=200, lists=15, top=40)
        want = enumerated(batch, basis, ncols)
        first = kept(memo, batch, ncols)
        before = memo.counts["enumerated"]
        again = kept(memo, batch, ncols)
        assert memo.counts["enumerated"] == before, "a batch met again enumerated products"
        assert np.array_equal(first, want) and np.array_equal(again, want), trial
        assert want.any()
    assert memo.counts["kept"] > 0 and memo.counts["enumerated"] < memo.counts["products"]


def test_no_budget_keeps_nothing(rng: np.random.Generator) -> None:
    basis = MilnorBasis()
    basis.extend(60)
    memo = use_z4_memo(basis, 0)
    batch, ncols = random_batch(rng, basis, rows=100, lists=10, top=40)
    assert np.array_equal(kept(memo, batch, ncols), enumerated(batch, basis, ncols))
    assert np.array_equal(kept(memo, batch, ncols), enumerated(batch, basis, ncols))
    assert memo.counts["kept"] == 0 and memo.counts["enumerated"] == memo.counts["products"] > 0


def test_budget_setting(monkeypatch) -> None:
    monkeypatch.setenv("NASSAU_Z4_MEMO_MB", "3")
    assert Z4Memo(MilnorBasis()).budget == 3 << 20
    monkeypatch.setenv("NASSAU_Z4_MEMO_MB", "0")
    assert Z4Memo(MilnorBasis())._full


def test_a_small_budget_stops_keeping(rng: np.random.Generator) -> None:
    basis = MilnorBasis()
    basis.extend(60)
    memo = use_z4_memo(basis, 200_000)  # the first hash (4096 slots, 98 KiB) and a little more
    for _ in range(4):
        batch, ncols = random_batch(rng, basis, rows=300, lists=20, top=40)
        assert np.array_equal(kept(memo, batch, ncols), enumerated(batch, basis, ncols))
    assert memo.nbytes <= 200_000 and memo._full


def test_threads_keeping_at_once_agree(rng: np.random.Generator) -> None:
    basis = MilnorBasis()
    basis.extend(60)
    memo = use_z4_memo(basis, 1 << 28)
    batches = [random_batch(rng, basis, rows=150, lists=12, top=44) for _ in range(6)]
    wants = [enumerated(b, basis, n) for b, n in batches]
    bad = []

    def worker(order: list[int]) -> None:
        for k in order:
            if not np.array_equal(kept(memo, *batches[k]), wants[k]):
                bad.append(k)

    threads = [threading.Thread(target=worker, args=(order,)) for order in ([0, 1, 2, 3, 4, 5], [5, 3, 1, 4, 2, 0])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad and memo.counts["kept"] > 0


def test_a_free_slot_holding_another_pairs_value_is_not_read(rng: np.random.Generator) -> None:
    """A thread inserting a pair writes its value before its words: until then the slot is free but holds a value.
    A reader whose probe ends there must enumerate, not read that other pair's terms (under load this gave a wrong
    product once in test_threads_keeping_at_once_agree). Here every free slot holds a value pointing at a term."""
    from algebra.secondary.z4_memo import _COUNT_BITS

    basis = MilnorBasis()
    basis.extend(60)
    memo = use_z4_memo(basis, 1 << 28)
    batch, ncols = random_batch(rng, basis, rows=150, lists=12, top=44)
    memo._terms[0] = (1 << 2) | 1  # rank 1, coefficient 1
    memo._keys[:, 2] = np.uint64((0 << _COUNT_BITS) | 1) + np.uint64(1)  # start 0, count 1, in every slot
    assert np.array_equal(kept(memo, batch, ncols), enumerated(batch, basis, ncols))


def test_the_d2_lift_reads_kept_products() -> None:
    from algebra.module.loader import load_module
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve
    from nassau.secondary.homotopy import secondary_homotopy

    region = Region(max_s=8, min_degree=0, max_stem=24)
    res = resolve(load_module("S_2"), region, "standard", 1)
    memo = use_z4_memo(res.algebra, 1 << 26)
    secondary_homotopy(res, region, 1)
    counts = memo.counts
    assert counts["kept"] > 0 and counts["enumerated"] < 0.7 * counts["products"], counts
