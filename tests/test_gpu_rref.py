"""Device RREF on the host: the real rref.cu compiled for the CPU (the block-level pivot search on 1, 5 and 32
threads with barriers), driven by gpu.rref exactly as on a device, against fp's M4RI row_reduce (same bits,
same pivots) on fresh random matrices of many shapes and ranks; the size dispatch, the no-tail rule, VERIFY,
and one trace event per large reduction."""
from __future__ import annotations

import io
import logging

import numpy as np
import pytest
from test_gpu_support import emulated, gpu_env, random_rank  # noqa: F401  (fixture)

from fp.m4ri import row_reduce
from fp.packed import from_bool, random_matrix, to_bool, words
from gpu import counters, device, rref, trace
from gpu.device import HostDevice
from gpu.errors import GpuVerifyError


@pytest.fixture(params=[1, 5, 32], ids=lambda n: f"{n}-thread-search")
def on_host(request: pytest.FixtureRequest, gpu_env, emulated: dict) -> HostDevice:
    """The emulated kernels, the pivot search run by a block of 1, 5 or 32 real threads."""
    gpu_env(mode=1, rref_min=1)
    dev = HostDevice(emulated, name="emulated rref.cu", block_threads=request.param)
    device.install(dev)
    return dev


SHAPES = [(1, 1, None), (5, 3, None), (64, 64, None), (200, 200, None), (300, 130, None), (130, 300, None),
          (257, 190, 40), (190, 257, 7), (100, 640, 64), (400, 100, 99), (128, 200, 0), (90, 333, 1)]


@pytest.mark.parametrize("rows, ncols, rank", SHAPES)
def test_same_rref_and_pivots_as_m4ri(on_host, rng: np.random.Generator, rows: int, ncols: int,
                                      rank: int | None) -> None:
    a = random_matrix(rows, ncols, rng) if rank is None else random_rank(rng, rows, ncols, rank)
    expected = a.copy()
    expected_pivots = row_reduce(expected, ncols)
    got = a.copy()
    pivots = rref.try_row_reduce(got, ncols)
    assert pivots is not None
    assert np.array_equal(pivots, expected_pivots)
    assert np.array_equal(got, expected)


def test_duplicate_and_zero_rows(on_host, rng: np.random.Generator) -> None:
    base = random_matrix(40, 150, rng)
    a = np.concatenate([np.zeros((7, base.shape[1]), np.uint64), base, base[::-1], base[:5]])
    expected = a.copy()
    pivots = row_reduce(expected, 150)
    assert np.array_equal(rref.try_row_reduce(a, 150), pivots) and np.array_equal(a, expected)


def test_pivots_after_the_first_check(gpu_env, emulated: dict, rng: np.random.Generator) -> None:
    """More panels than rref.CHECK_EVERY, the rank below the row count and pivots past the first check: the panel
    loop must run to the last panel (it may stop early only once every row holds a pivot)."""
    gpu_env(mode=1, rref_min=1)
    device.install(HostDevice(emulated, block_threads=32))
    ncols = 64 * (rref.CHECK_EVERY + 3)
    bits = np.zeros((60, ncols), dtype=bool)
    bits[:20] = rng.random((20, ncols)) < 0.5
    bits[20:, -150:] = to_bool(random_rank(rng, 40, 150, 30), 150)  # rank 30: ten rows never get a pivot
    a = from_bool(bits)
    expected = a.copy()
    expected_pivots = row_reduce(expected, ncols)
    assert expected_pivots[-1] >= 64 * rref.CHECK_EVERY
    pivots = rref.try_row_reduce(a, ncols)
    assert np.array_equal(pivots, expected_pivots)
    assert np.array_equal(a, expected)


def test_counts_one_device_reduction(on_host, rng: np.random.Generator) -> None:
    counters.reset()
    rref.try_row_reduce(random_matrix(70, 200, rng), 200)
    snap = counters.snapshot()
    assert snap["device_rrefs"] == 1
    assert snap["launches"] == 5 * words(200), "five launches per 64-column panel"


def test_dispatch_by_size_tail_and_mode(gpu_env, emulated: dict, rng: np.random.Generator) -> None:
    device.install(HostDevice(emulated, block_threads=1))
    a = random_matrix(100, 150, rng)
    gpu_env(mode=1, rref_min=101)
    assert rref.try_row_reduce(a.copy(), 150) is None
    gpu_env(mode=1, rref_min=100)
    assert rref.try_row_reduce(a.copy(), 150) is not None
    tail = np.concatenate([a, random_matrix(100, 64, rng)], axis=1)
    untouched = tail.copy()
    assert rref.try_row_reduce(tail, 150) is None, "words beyond ncols stay on the CPU"
    assert np.array_equal(tail, untouched)
    assert rref.try_row_reduce(np.asfortranarray(a), 150) is None, "not a packed C-contiguous matrix"
    gpu_env(mode=0, rref_min=1)
    assert rref.try_row_reduce(a.copy(), 150) is None


def test_default_threshold_is_the_reference_break_even(gpu_env) -> None:
    gpu_env()
    from gpu import config

    assert config.current().rref_min == 8192


def test_verify(on_host, gpu_env, emulated: dict, rng: np.random.Generator) -> None:
    gpu_env(mode=1, rref_min=1, verify=1)
    a = random_rank(rng, 150, 170, 60)
    with pytest.raises(ValueError, match="cpu="):
        rref.try_row_reduce(a.copy(), 170)
    assert rref.try_row_reduce(a.copy(), 170, cpu=row_reduce) is not None
    skipped = {"n": 0}

    def lazy_update(grid, block, args):
        skipped["n"] += 1
        if skipped["n"] != 1:  # the first panel of a random matrix always has pivots
            emulated["rref_update"](grid, block, args)

    device.install(HostDevice({**emulated, "rref_update": lazy_update}, block_threads=on_host.block_threads))
    with pytest.raises(GpuVerifyError, match="differs from the CPU"):
        rref.try_row_reduce(a.copy(), 170, cpu=row_reduce)


def test_one_trace_event_per_large_reduction(gpu_env, emulated: dict, rng: np.random.Generator,
                                             caplog: pytest.LogCaptureFixture) -> None:
    big = trace.TRACE_MIN
    gpu_env(mode=0)
    a = random_rank(rng, big, big + 10, 300)
    expected = a.copy()
    pivots = row_reduce(expected, big + 10)  # fp's CPU result, before events are recorded
    caplog.set_level(logging.INFO, logger="nassau.trace")
    rref.try_row_reduce(random_matrix(big, big, rng), big, bidegree=(3, 40))
    rref.try_row_reduce(random_matrix(big - 1, 4000, rng), 4000)
    gpu_env(mode=1, rref_min=big)
    device.install(HostDevice(emulated, block_threads=1))
    assert np.array_equal(rref.try_row_reduce(a, big + 10, bidegree=(5, 77)), pivots)
    assert np.array_equal(a, expected)
    events = [r.event for r in caplog.records if r.name == "nassau.trace"]
    assert events == [
        {"event": "row_reduce", "rows": big, "cols": big, "path": "cpu", "bidegree": (3, 40)},
        {"event": "row_reduce", "rows": big, "cols": big + 10, "path": "gpu", "bidegree": (5, 77)},
    ]


def test_enable_writes_one_line_per_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace.LOGGER, "handlers", [])
    monkeypatch.setattr(trace.LOGGER, "level", logging.NOTSET)
    stream = io.StringIO()
    trace.enable(stream)
    trace.reduction(5000, 2048, "cpu", (2, 30))
    trace.reduction(10, 5000, "cpu")
    assert stream.getvalue() == "nassau.trace row_reduce rows=5000 cols=2048 path=cpu bidegree=(2, 30)\n"
