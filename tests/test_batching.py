"""Structural guards: matrix builds and Nassau steps make a bounded number of compiled product calls.

A revert to per-row or per-product Python work would multiply these counts by the number of rows.
"""
from __future__ import annotations

import numpy as np

from algebra import products
from nassau.nassau_step import step_nassau
from nassau.standard import step_standard
from tests.helpers import run_engine


def test_a_matrix_build_is_one_kernel_call() -> None:
    res, _ = run_engine("S_2", stem=40, max_s=6, algorithm="standard")
    s, t = 4, 44
    rows = np.arange(res.free(s).dimension(t, res.free(s).gens_below(t)), dtype=np.int64)
    assert len(rows) > 300
    before = dict(products.COUNTERS)
    res.differential(s).matrix(t, rows, res.free(s - 1).gens_below(t + 1))
    assert products.COUNTERS["batch_calls"] - before["batch_calls"] == 1
    assert products.COUNTERS["products"] - before["products"] > len(rows)


def test_nassau_step_batches_its_products() -> None:
    """A step makes at most a few product calls per signature it corrects, however many rows its matrices have."""
    res, _ = run_engine("S_2", max_t=53, max_s=8, algorithm="nassau")  # everything (5, 54) needs, not (5, 54)
    rows = res.free(4).dimension(54, res.free(4).gens_below(54))
    before = products.COUNTERS["batch_calls"]
    count = step_nassau(res, 5, 54)
    calls = products.COUNTERS["batch_calls"] - before
    assert count > 0 and rows > 500
    assert calls <= 3 + 2 * 64  # zero-signature kernel and image, dx, then two per corrected signature of A(2)
    assert calls < rows / 5


def test_standard_step_is_two_builds() -> None:
    res, _ = run_engine("S_2", max_t=39, max_s=6, algorithm="standard")
    before = products.COUNTERS["batch_calls"]
    step_standard(res, 4, 40, keep_kernel=False)  # its own matrix, and ker d_3 in degree 40: two builds
    assert products.COUNTERS["batch_calls"] - before == 2
