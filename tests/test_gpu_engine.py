"""The engine through the GPU entry points with a host device standing in: same charts, and the device used."""
from __future__ import annotations

import pytest

from algebra.milnor import products
from charts.text import text_chart
from gpu import counters, device
from nassau.api.chart_data import build_chart
from tests.helpers import cli, golden, run_cli, run_engine
from tests.test_gpu_support import emulated, gpu_env, twin_device  # noqa: F401  (fixtures)


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_chart_with_the_device_path_equals_the_golden_chart(gpu_env, algorithm: str) -> None:  # noqa: F811
    gpu_env(min_work=0, verify=1)
    device.install(twin_device())
    before = products.COUNTERS["device_batches"]
    res, region = run_engine("S_2", stem=30, max_s=11, algorithm=algorithm)
    assert products.COUNTERS["device_batches"] > before + 50
    assert counters.snapshot()["launches"] > 0
    assert text_chart(build_chart(res, region, "S_2", algorithm, products=False)) == golden("resolve_through_stem-S_2")


def test_small_batches_stay_on_the_cpu(gpu_env) -> None:  # noqa: F811
    gpu_env(min_work=10**12)
    device.install(twin_device())
    before = products.COUNTERS["device_batches"]
    run_engine("S_2", stem=20, max_s=6, algorithm="nassau")
    assert products.COUNTERS["device_batches"] == before


def test_required_gpu_missing_is_one_line_and_status_2(gpu_env) -> None:  # noqa: F811
    gpu_env(mode=1)
    out = run_cli("resolve", "S_2", "--stem", "10")
    err = out.stderr.decode()
    if out.returncode == 0:
        pytest.skip("a GPU answered on this machine")
    assert out.returncode == 2 and err.startswith("nassau: error: NASSAU_GPU=1") and len(err.splitlines()) == 1


def test_bad_gpu_knob_is_one_line(gpu_env) -> None:  # noqa: F811
    gpu_env(block_mb="lots")
    out = run_cli("resolve", "S_2", "--stem", "10")
    err = out.stderr.decode()
    assert out.returncode == 2 and "NASSAU_GPU_BLOCK_MB" in err and len(err.splitlines()) == 1


def test_large_reductions_go_through_the_device_entry(gpu_env, emulated, rng) -> None:  # noqa: F811
    """fp.row_reduce offers large matrices to gpu.rref (rref.cu compiled for the host) and gets fp's exact RREF."""
    import numpy as np

    import fp
    from fp.m4ri import COUNTERS
    from gpu.device import HostDevice

    gpu_env(rref_min=1024, verify=1)
    device.install(HostDevice(emulated, name="emulated rref.cu", block_threads=1))
    a = fp.random_matrix(1100, 1300, rng)
    expected = a.copy()
    before = COUNTERS["device_calls"]
    pivots = fp.row_reduce(a, 1300)
    assert COUNTERS["device_calls"] == before + 1
    device.install(None)
    gpu_env(mode=0)
    assert np.array_equal(pivots, fp.row_reduce(expected, 1300)) and np.array_equal(a, expected)


def test_trace_names_each_large_reduction(tmp_path) -> None:
    out = cli("resolve", "S_2", "--stem", "4", "--quiet", "--trace")
    assert out.returncode == 0 and b"row_reduce" not in out.stderr  # nothing that large here
    import io
    import logging

    import fp
    from gpu import trace

    stream = io.StringIO()
    trace.enable(stream)
    try:
        with trace.working_on(7, 90):
            fp.row_reduce(fp.zeros(1200, 1500), 1500)
    finally:
        trace.LOGGER.setLevel(logging.NOTSET)
        trace.LOGGER.handlers.clear()
    assert "row_reduce rows=1200 cols=1500 path=cpu bidegree=(7, 90)" in stream.getvalue()
