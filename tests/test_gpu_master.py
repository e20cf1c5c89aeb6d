"""The resident admissible master on a host stand-in: tails copied in place, rare doublings that wait for
readers, the R -> slot bookkeeping against algebra's host master, and the 2^32-element cap (tiny here)."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from test_gpu_support import gpu_env, random_batch, twin_device  # noqa: F401  (fixture)

from algebra.milnor.basis import MilnorBasis
from gpu import products
from gpu.errors import MasterFullError
from gpu.layout import MAT_WIDTH, records
from gpu.master import MAX_ELEMENTS, ResidentMaster

BASIS = MilnorBasis()
BASIS.extend(60)


def check_contents(master: ResidentMaster, batch, slots: np.ndarray) -> None:
    """Every row's device slot holds exactly its R's matrices from the host master, in order."""
    mats, index = master.mats.array, master.index.array
    for i in range(len(batch.row_r)):
        first, count = index[slots[i]]
        k = batch.row_slot[i]
        want = records(batch.cs[batch.start[k]:batch.start[k] + batch.count[k]],
                       batch.mk[batch.start[k]:batch.start[k] + batch.count[k]])
        assert np.array_equal(mats[first:first + count], want)
        assert master.counts(slots[i:i + 1])[0] == count


def test_tail_in_place_then_doubling(gpu_env, rng: np.random.Generator) -> None:
    master = ResidentMaster(twin_device(), initial_rows=4)
    seen_rows = 0
    for step in range(6):
        batch = random_batch(rng, BASIS, rows=20 + 10 * step, lists=5, top=24 + 4 * step)
        before, capacity, doublings = master.mats.array, master.mats.capacity, master.mats.doublings
        slots = master.ensure(batch.row_r, batch.row_slot, batch.start, batch.count, batch.cs, batch.mk)
        check_contents(master, batch, slots)
        grew = master.mats.used > capacity
        assert (master.mats.doublings > doublings) == grew
        if not grew:
            assert master.mats.array is before, "a tail that fits is written in place"
        assert master.mats.capacity <= max(2 * capacity, master.mats.used)
        seen_rows = master.mats.used
    assert master.mats.doublings >= 2
    assert len(master.slot_of) == master.index.used
    # The same R's again: nothing new is uploaded.
    slots = master.ensure(batch.row_r, batch.row_slot, batch.start, batch.count, batch.cs, batch.mk)
    assert master.mats.used == seen_rows
    check_contents(master, batch, slots)


def test_doubling_waits_for_readers(gpu_env, rng: np.random.Generator) -> None:
    master = ResidentMaster(twin_device(), initial_rows=2)
    batch = random_batch(rng, BASIS, rows=60, lists=5, top=40)
    done = threading.Event()
    with master.reading() as (mats, _):
        worker = threading.Thread(target=lambda: (master.ensure(batch.row_r, batch.row_slot, batch.start,
                                                                batch.count, batch.cs, batch.mk), done.set()),
                                  daemon=True)
        worker.start()
        time.sleep(0.1)
        assert not done.is_set(), "the doubling must wait while a launch reads the master"
        assert master.mats.array is mats
    worker.join(10)
    assert done.is_set() and master.mats.doublings >= 1


def test_cap_refuses_clearly_and_leaves_nothing_half_done(gpu_env, rng: np.random.Generator) -> None:
    assert MAX_ELEMENTS < 2**32
    small = random_batch(rng, BASIS, rows=5, lists=2, top=12)
    big = random_batch(rng, BASIS, rows=80, lists=2, top=50)
    cap_rows = int(small.count.sum()) + 2
    master = ResidentMaster(twin_device(), max_elements=cap_rows * MAT_WIDTH, initial_rows=2)
    master.ensure(small.row_r, small.row_slot, small.start, small.count, small.cs, small.mk)
    used, slots = master.mats.used, dict(master.slot_of)
    with pytest.raises(MasterFullError, match="2\\^32"):
        master.ensure(big.row_r, big.row_slot, big.start, big.count, big.cs, big.mk)
    assert master.mats.used == used and master.slot_of == slots
    assert master.mats.capacity <= cap_rows


def test_full_master_sends_the_batch_to_the_cpu(gpu_env, rng: np.random.Generator,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_env(mode=1, min_work=0)
    dev = twin_device()
    dev.state("master", lambda: ResidentMaster(dev, max_elements=MAT_WIDTH * 3, initial_rows=1))
    from gpu import device

    device.install(dev)
    batch = random_batch(rng, BASIS, rows=30, lists=4, top=30)
    out = batch.zeros()
    assert products.try_run_batch(out, *batch.args()) is False
    assert not out.any(), "a refused batch leaves out untouched"


def test_concurrent_batches_grow_one_master(gpu_env, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0, streams=2, mem_budget_mb=1)
    dev = twin_device()
    master = dev.state("master", lambda: ResidentMaster(dev, initial_rows=2))
    from gpu import device

    device.install(dev)
    batches = [random_batch(rng, BASIS, rows=40, lists=5, top=24 + 6 * k) for k in range(6)]
    results: list = [None] * len(batches)

    def work(k: int) -> None:
        out = batches[k].zeros()
        assert products.try_run_batch(out, *batches[k].args())
        results[k] = out

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for batch, got in zip(batches, results):
        expected = batch.zeros()
        batch.admissible(expected)
        assert np.array_equal(got, expected)
    assert master.mats.doublings >= 2
    assert master.mats.used == int(master.counts(np.arange(master.index.used)).sum())
