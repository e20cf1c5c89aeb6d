"""gf2_matmul / gf2_addmul against an integer numpy product mod 2."""
from __future__ import annotations

import os

import numba
import numpy as np
import pytest

from fp import threads
from fp.matmul import COUNTERS, PARALLEL_MIN_ROWS, gf2_addmul, gf2_matmul
from fp.packed import random_matrix, to_bool, words, zeros


def reference(a: np.ndarray, b: np.ndarray, k: int, n: int) -> np.ndarray:
    return (to_bool(a, k).astype(np.int64) @ to_bool(b, n).astype(np.int64)) % 2 == 1


SHAPES = [(1, 1, 1), (3, 5, 7), (10, 64, 65), (40, 100, 130), (255, 33, 70), (256, 200, 100),
          (300, 129, 2100), (20, 1000, 64), (0, 5, 10), (5, 0, 10), (7, 9, 0)]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("parallel", [False, True])
def test_matches_numpy(m: int, k: int, n: int, parallel: bool, rng: np.random.Generator) -> None:
    a, b = random_matrix(m, k, rng), random_matrix(k, n, rng)
    c = gf2_matmul(a, b, k, n, parallel=parallel)
    assert c.shape == (m, words(n))
    np.testing.assert_array_equal(to_bool(c, n), reference(a, b, k, n))
    assert not to_bool(c, c.shape[1] * 64)[:, n:].any()


def test_sparse_left_factor_and_addmul(rng: np.random.Generator) -> None:
    m, k, n = 500, 300, 400
    a = random_matrix(m, k, rng)
    a[rng.random(m) < 0.7] = 0  # zero passes are skipped; the result must not change
    b = random_matrix(k, n, rng)
    c0 = random_matrix(m, n, rng)
    c = c0.copy()
    gf2_addmul(c, a, b, k, n)
    np.testing.assert_array_equal(to_bool(c, n), to_bool(c0, n) ^ reference(a, b, k, n))


def test_zero_passes_of_a_cost_no_lookup(rng: np.random.Generator) -> None:
    """Structural: a row of A looks B's tables up only in the passes where it has bits. With one bit per row and B
    one column chunk wide, that is one lookup per row (dense passes would make k / 64 of them)."""
    m, k, n = 300, 1000, 100
    cols = rng.integers(0, k, size=m)
    a = zeros(m, k)
    a[np.arange(m), cols >> 6] = np.uint64(1) << (cols & 63).astype(np.uint64)
    b = random_matrix(k, n, rng)
    before = COUNTERS["lookups"]
    c = gf2_matmul(a, b, k, n, parallel=False)
    assert COUNTERS["lookups"] - before == m
    np.testing.assert_array_equal(c, b[cols])


@pytest.mark.parametrize("runnable,threads_expected", [(1, True), (50, False)])
def test_automatic_threads_need_idle_cores_and_rows(runnable: int, threads_expected: bool,
                                                    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    if numba.get_num_threads() < 2:
        pytest.skip("numba runs one thread here")
    monkeypatch.setattr(threads, "runnable_tasks", lambda: runnable)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    b = random_matrix(64, 64, rng)
    before = COUNTERS["parallel_calls"]
    gf2_matmul(random_matrix(PARALLEL_MIN_ROWS, 64, rng), b, 64, 64)
    assert COUNTERS["parallel_calls"] - before == int(threads_expected)
    gf2_matmul(random_matrix(PARALLEL_MIN_ROWS - 1, 64, rng), b, 64, 64)  # fewer rows: never threads
    assert COUNTERS["parallel_calls"] - before == int(threads_expected)


def test_large_parallel_equals_serial(rng: np.random.Generator) -> None:
    m, k, n = 2500, 700, 900
    a, b = random_matrix(m, k, rng), random_matrix(k, n, rng)
    np.testing.assert_array_equal(gf2_matmul(a, b, k, n, parallel=True), gf2_matmul(a, b, k, n, parallel=False))


@pytest.mark.parametrize(
    "shapes,k,n,message",
    [
        (((4, 1), (65, 1)), 65, 10, "words per row"),
        (((4, 2), (64, 1)), 65, 10, "rows but A has"),
        (((4, 2), (65, 1)), 65, 100, "needs 2 words"),
    ],
)
def test_bad_shapes(shapes, k: int, n: int, message: str) -> None:
    a, b = (np.zeros(s, dtype=np.uint64) for s in shapes)
    with pytest.raises(ValueError, match=message):
        gf2_matmul(a, b, k, n)


def test_addmul_checks_output() -> None:
    with pytest.raises(ValueError, match="C has shape"):
        gf2_addmul(zeros(3, 10), zeros(4, 5), zeros(5, 10), 5, 10)
    with pytest.raises(ValueError, match="dtype"):
        gf2_addmul(np.zeros((4, 1), dtype=np.int64), zeros(4, 5), zeros(5, 10), 5, 10)
