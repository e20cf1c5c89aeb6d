"""On a CUDA device (pytest -m gpu; skipped with the reason where none answers): each kernel against its twin
bit for bit on fresh random inputs, the resident master on the device, concurrent callers on shared streams,
and the whole chart with the device off and on."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest
from test_gpu_support import gpu_env, random_batch, random_col_map, random_rank  # noqa: F401  (fixture)

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.profile import a_n
from fp.m4ri import row_reduce
from fp.packed import random_matrix
from gpu import counters, device, marshal, milnor_twin, products, rref
from gpu.device import CupyDevice
from gpu.layout import records
from gpu.master import ResidentMaster

pytestmark = pytest.mark.gpu

FULL = MilnorBasis()
FULL.extend(90)
A2 = MilnorBasis(a_n(2))
A2.extend(40)


@pytest.fixture
def on_device(gpu_env) -> CupyDevice:
    gpu_env(mode=1, min_work=0, rref_min=1)
    dev = device.current()
    assert isinstance(dev, CupyDevice)
    return dev


def twin_of(batch, col_map=None, ncols=None) -> np.ndarray:
    out = batch.zeros(ncols)
    milnor_twin.reference(out, batch.row_slot, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s,
                          batch.term_sdeg, batch.term_col, batch.start, batch.count, batch.cs, batch.mk,
                          batch.basis.rank_g, batch.basis.index_map, batch.basis.index_map_offset,
                          np.zeros(0, dtype=np.int64) if col_map is None else col_map)
    return out


@pytest.mark.parametrize("basis, top, rows", [(FULL, 60, 400), (FULL, 90, 150), (A2, 22, 300)],
                         ids=["A-60", "A-90", "A(2)"])
def test_product_kernel_equals_its_twin(on_device, rng: np.random.Generator, basis: MilnorBasis, top: int,
                                        rows: int) -> None:
    batch = random_batch(rng, basis, rows=rows, lists=30, top=top)
    expected = batch.zeros()
    batch.admissible(expected)
    assert np.array_equal(twin_of(batch), expected)
    out = batch.zeros()
    assert products.try_run_batch(out, *batch.args()) is True
    assert np.array_equal(out, expected)
    assert counters.snapshot()["launches"] >= 1


def test_product_kernel_with_column_map_and_split_launches(on_device, rng: np.random.Generator,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    batch = random_batch(rng, FULL, rows=300, lists=20, top=50)
    col_map, kept = random_col_map(rng, batch.ncols)
    expected = twin_of(batch, col_map, kept)
    monkeypatch.setattr(marshal, "MAX_THREADS", 1001)
    counters.reset()
    out = batch.zeros(kept)
    assert products.try_run_batch(out, *batch.args(col_map)) is True
    assert np.array_equal(out, expected)
    assert counters.snapshot()["launches"] > 1


def test_master_grows_on_the_device(on_device, rng: np.random.Generator) -> None:
    master = ResidentMaster(on_device, initial_rows=2)
    for top in (20, 40, 60):
        batch = random_batch(rng, FULL, rows=50, lists=3, top=top)
        with on_device.section():
            slots = master.ensure(batch.row_r, batch.row_slot, batch.start, batch.count, batch.cs, batch.mk)
        mats, index = master.mats.array.get(), master.index.array.get()
        for i in range(len(slots)):
            first, count = index[slots[i]]
            k = batch.row_slot[i]
            rows = slice(batch.start[k], batch.start[k] + batch.count[k])
            assert np.array_equal(mats[first:first + count], records(batch.cs[rows], batch.mk[rows]))
    assert master.mats.doublings >= 1


def test_concurrent_callers_share_streams(gpu_env, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0, streams=2, mem_budget_mb=1)
    batches = [random_batch(rng, FULL, rows=200, lists=10, top=50) for _ in range(6)]
    results: list = [None] * len(batches)

    def work(k: int) -> None:
        out = batches[k].zeros()
        products.try_run_batch(out, *batches[k].args())
        results[k] = out

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    for batch, got in zip(batches, results):
        assert np.array_equal(got, twin_of(batch))
    assert device.current().streams.created <= 2


@pytest.mark.parametrize("rows, ncols, rank", [(1000, 1500, None), (3000, 2000, 700), (2048, 4096, None),
                                               (5000, 640, 200), (4100, 4100, 4000)])
def test_rref_kernels_equal_m4ri(gpu_env, rng: np.random.Generator, rows: int, ncols: int,
                                 rank: int | None) -> None:
    a = random_matrix(rows, ncols, rng) if rank is None else random_rank(rng, rows, ncols, rank)
    gpu_env(mode=0)  # fp's row_reduce offers reductions of 1024 x 1024 and more to the device: keep it off here
    expected = a.copy()
    expected_pivots = row_reduce(expected, ncols)
    gpu_env(mode=1, rref_min=1)
    assert isinstance(device.current(), CupyDevice)
    pivots = rref.try_row_reduce(a, ncols)
    assert np.array_equal(pivots, expected_pivots)
    assert np.array_equal(a, expected)


def test_verify_mode_on_the_device(gpu_env, rng: np.random.Generator) -> None:
    gpu_env(mode=1, min_work=0, rref_min=1, verify=1)
    batch = random_batch(rng, FULL, rows=200, lists=10, top=50)
    assert products.try_run_batch(batch.zeros(), *batch.args(), cpu=batch.admissible) is True
    assert rref.try_row_reduce(random_rank(rng, 900, 1300, 500), 1300, cpu=row_reduce) is not None


def test_whole_chart_is_identical_with_the_device_off_and_on(tmp_path) -> None:
    cmd = [sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", "60"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("NASSAU_GPU")}
    off = subprocess.run(cmd, env={**base, "NASSAU_GPU": "0"}, capture_output=True, timeout=1200)
    assert off.returncode == 0, off.stderr.decode()
    # Thresholds at zero so that the device does the work even at this size, checked as it goes.
    on = subprocess.run(cmd, env={**base, "NASSAU_GPU": "1", "NASSAU_GPU_MIN_WORK": "0",
                                  "NASSAU_GPU_RREF_MIN": "256", "NASSAU_GPU_VERIFY": "1",
                                  "NASSAU_GPU_DEBUG": "1"}, capture_output=True, timeout=1200)
    assert on.returncode == 0, on.stderr.decode()[-4000:]
    assert on.stdout == off.stdout
    summary = re.search(r"nassau\.gpu summary: launches=(\d+)", on.stderr.decode())
    assert summary and int(summary.group(1)) > 0, "the run with NASSAU_GPU=1 never launched a kernel"
