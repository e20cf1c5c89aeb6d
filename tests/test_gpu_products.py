"""Batched products on host stand-ins: the numpy twin of milnor.cu's thread decomposition and the real CUDA
source compiled for the host, bit for bit against algebra's one-at-a-time products and its batched
admissible kernel, through the whole entry point (master, marshal, blocks, column maps, profiles)."""
from __future__ import annotations

import numpy as np
import pytest
from test_gpu_support import emulated, gpu_env, random_batch, random_col_map, twin_device  # noqa: F401  (fixture)

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.profile import a_n
from gpu import counters, device, marshal, milnor_twin, products
from gpu.device import HostDevice
from gpu.errors import GpuVerifyError

FULL = MilnorBasis()
FULL.extend(70)
A2 = MilnorBasis(a_n(2))
A2.extend(40)

@pytest.mark.parametrize("basis, top", [(FULL, 44), (A2, 22)], ids=["A", "A(2)"])
@pytest.mark.parametrize("group", [1, 4, 5])
def test_twin_equals_one_at_a_time_and_admissible_kernel(rng: np.random.Generator, basis: MilnorBasis, top: int,
                                                         group: int) -> None:
    batch = random_batch(rng, basis, rows=120, lists=15, top=top)
    expected = batch.one_at_a_time()
    assert expected.any()
    admissible = batch.zeros()
    batch.admissible(admissible)
    assert np.array_equal(admissible, expected)
    twin = batch.zeros()
    milnor_twin.reference(twin, batch.row_slot, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s,
                          batch.term_sdeg, batch.term_col, batch.start, batch.count, batch.cs, batch.mk,
                          basis.rank_g, basis.index_map, basis.index_map_offset, np.zeros(0, dtype=np.int64),
                          group=group)
    assert np.array_equal(twin, expected)


def run_entry(dev: HostDevice, batch, col_map=None, ncols=None) -> np.ndarray:
    device.install(dev)
    out = batch.zeros(ncols)
    out[:] = np.uint64(0x5A5A5A5A5A5A5A5A)  # XOR semantics: existing bits must stay XORed in
    assert products.try_run_batch(out, *batch.args(col_map)) is True
    return out ^ np.uint64(0x5A5A5A5A5A5A5A5A)


def stand_ins(emulated: dict) -> list[HostDevice]:
    return [twin_device(), HostDevice(emulated, name="emulated milnor.cu")]


@pytest.mark.parametrize("basis, top", [(FULL, 44), (A2, 22)], ids=["A", "A(2)"])
def test_entry_point_equals_algebra(gpu_env, emulated: dict, rng: np.random.Generator, basis: MilnorBasis,
                                    top: int) -> None:
    gpu_env(mode=1, min_work=0)
    batch = random_batch(rng, basis, rows=150, lists=20, top=top)
    expected = batch.zeros()
    batch.admissible(expected)
    for dev in stand_ins(emulated):
        assert np.array_equal(run_entry(dev, batch), expected), dev.name


def test_column_map(gpu_env, emulated: dict, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0)
    batch = random_batch(rng, FULL, rows=100, lists=12, top=36)
    col_map, kept = random_col_map(rng, batch.ncols)
    expected = batch.zeros(kept)
    batch.admissible(expected, col_map)
    assert expected.any()
    for dev in stand_ins(emulated):
        assert np.array_equal(run_entry(dev, batch, col_map, kept), expected), dev.name


def test_split_launches_give_the_same_bits(gpu_env, emulated: dict, rng: np.random.Generator,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    gpu_env(mode=1, min_work=0)
    batch = random_batch(rng, FULL, rows=80, lists=10, top=36)
    expected = batch.zeros()
    batch.admissible(expected)
    monkeypatch.setattr(marshal, "MAX_THREADS", 97)  # rows are cut between launches too
    # Counted here, not by marshal: a thread per term and group of GROUP admissible matrices of the row's R.
    threads = sum(int(batch.term_start[lst + 1] - batch.term_start[lst]) * -(-int(batch.count[slot]) // marshal.GROUP)
                  for lst, slot in zip(batch.row_terms, batch.row_slot))
    for dev in stand_ins(emulated):
        counters.reset()
        assert np.array_equal(run_entry(dev, batch), expected), dev.name
        assert counters.snapshot()["launches"] == -(-threads // 97)


def test_one_launch_per_block_and_resident_master(gpu_env, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0)
    dev = twin_device()
    batch = random_batch(rng, FULL, rows=100, lists=10, top=36)
    run_entry(dev, batch)
    first = counters.snapshot()
    assert first["launches"] == 1 and first["device_batches"] == 1
    assert first["master_matrices"] == batch.count[np.unique(batch.row_slot)].sum()
    run_entry(dev, batch)
    second = counters.snapshot()
    assert second["launches"] == 2
    assert second["master_matrices"] == first["master_matrices"], "matrices are uploaded once per process"
    assert second["bytes_uploaded"] - first["bytes_uploaded"] < first["bytes_uploaded"], \
        "the second call uploads only its marshal buffer (master and tables are resident)"


def test_kernel_and_copy_times_are_counted_under_debug_only(gpu_env, rng: np.random.Generator,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """device_check reports kernel and transfer times from these; outside debug runs nothing waits for them."""
    monkeypatch.setattr(counters, "_summary_registered", True)  # no exit summary from the test process
    batch = random_batch(rng, FULL, rows=100, lists=10, top=36)
    for debug in (0, 1):
        gpu_env(mode=1, min_work=0, debug=debug)
        counters.reset()
        run_entry(twin_device(), batch)
        times = [counters.snapshot()[name] for name in ("kernel_ns", "upload_ns", "download_ns")]
        assert all(t > 0 for t in times) if debug else times == [0, 0, 0], (debug, times)


def test_below_min_work_stays_on_the_cpu(gpu_env, rng: np.random.Generator) -> None:
    while True:  # a batch whose products are not all zero (its lists may be empty, its products vanish)
        batch = random_batch(rng, FULL, rows=10, lists=3, top=20)
        reference = batch.zeros()
        batch.admissible(reference)
        if reference.any():
            break
    out = batch.zeros()
    cells = out.shape[0] * out.shape[1] * 64
    device.install(twin_device())
    gpu_env(mode=1, min_work=cells + 1)
    assert products.try_run_batch(out, *batch.args()) is False and not out.any()
    gpu_env(mode=1, min_work=cells)
    assert products.try_run_batch(out, *batch.args()) is True and out.any()
    gpu_env(mode=0, min_work=0)
    assert products.try_run_batch(batch.zeros(), *batch.args()) is False


def test_verify_accepts_a_correct_kernel_and_catches_a_wrong_one(gpu_env, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0, verify=1)
    batch = random_batch(rng, FULL, rows=60, lists=8, top=32)
    expected = batch.zeros()
    batch.admissible(expected)
    assert np.array_equal(run_entry(twin_device(), batch), expected)  # twin check (no cpu callback)
    device.install(twin_device())
    out = batch.zeros()
    assert products.try_run_batch(out, *batch.args(), cpu=batch.admissible) is True
    assert np.array_equal(out, expected)

    def dropping(grid, block, args):
        milnor_twin.milnor_products(*args)
        args[0][0, 0] ^= np.uint64(1)  # one wrong bit (in the first row of the launch's block)

    device.install(HostDevice({"milnor_products": dropping}))
    with pytest.raises(GpuVerifyError, match=r"differ from the CPU in 1 rows; first at row \d+, word 0"):
        products.try_run_batch(batch.zeros(), *batch.args(), cpu=batch.admissible)
