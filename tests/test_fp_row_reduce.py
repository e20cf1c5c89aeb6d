"""row_reduce against the galois oracle, its paths against each other, and the M4RI table path counted."""
from __future__ import annotations

import os
import threading

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fp import m4ri, threads
from fp.m4ri import COUNTERS, row_reduce
from fp.packed import from_bool, random_matrix, to_bool, words, zeros
from tests.oracles.fp_matrices import oracle_rref, rank_deficient, sparse_matrix


def assert_matches_oracle(a: np.ndarray, ncols: int, **kwargs) -> np.ndarray:
    """Reduce a copy of `a` and compare RREF and pivots with galois; returns the reduced copy."""
    expected, expected_pivots = oracle_rref(a, ncols)
    b = a.copy()
    pivots = row_reduce(b, ncols, **kwargs)
    assert pivots.dtype == np.int64
    np.testing.assert_array_equal(pivots, expected_pivots)
    np.testing.assert_array_equal(to_bool(b, ncols), expected)
    return b


SHAPES = [
    (1, 1), (1, 200), (3, 1), (7, 64), (64, 64), (65, 63), (100, 100), (150, 40), (40, 150),
    (200, 129), (257, 300), (33, 1000), (300, 64 * 5 + 7),
]


@pytest.mark.parametrize("rows,ncols", SHAPES)
@pytest.mark.parametrize("kind", ["random", "rank_deficient", "sparse"])
def test_rref_matches_galois(rows: int, ncols: int, kind: str, rng: np.random.Generator) -> None:
    if kind == "random":
        a = random_matrix(rows, ncols, rng)
    elif kind == "rank_deficient":
        a = rank_deficient(rows, ncols, max(1, min(rows, ncols) // 3), rng)
    else:
        a = sparse_matrix(rows, ncols, 0.03, rng)
    assert_matches_oracle(a, ncols, parallel=False)


def test_very_wide(rng: np.random.Generator) -> None:
    assert_matches_oracle(random_matrix(100, 30000, rng), 30000)


@pytest.mark.parametrize("rows,ncols", [(0, 0), (0, 10), (10, 0), (5, 70)])
def test_degenerate_shapes(rows: int, ncols: int) -> None:
    a = zeros(rows, ncols)
    pivots = row_reduce(a, ncols)
    assert pivots.shape == (0,) and not a.any()


def test_all_zero_large() -> None:
    a = zeros(500, 700)
    assert row_reduce(a, 700).shape == (0,) and not a.any()


@pytest.mark.parametrize("force", ["gauss", "m4ri"])
@pytest.mark.parametrize("rows,ncols", [(3, 5), (20, 100), (70, 70), (130, 300), (150, 64 * 3 + 5)])
def test_each_path_matches_galois(force: str, rows: int, ncols: int, rng: np.random.Generator,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Both kernels on the same sizes, whatever the size rule would pick."""
    monkeypatch.setattr(m4ri, "GAUSS_MAX_ROWS", 1 << 62 if force == "gauss" else -1)
    monkeypatch.setattr(m4ri, "GAUSS_MAX_CELLS", 1 << 62)
    monkeypatch.setitem(m4ri._COLD, "compiled", True)
    for a in (random_matrix(rows, ncols, rng), rank_deficient(rows, ncols, max(1, rows // 2), rng)):
        assert_matches_oracle(a, ncols)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_every_table_width(k: int, rng: np.random.Generator) -> None:
    """Spans of non-contiguous pivots (sparse, rank-deficient) through each k of the lookup tables."""
    for a in (sparse_matrix(90, 400, 0.02, rng), rank_deficient(120, 200, 50, rng)):
        expected, expected_pivots = oracle_rref(a, a.shape[1] * 64)
        b = a.copy()
        pivots, _ = m4ri._m4ri(b, a.shape[1] * 64, k)
        np.testing.assert_array_equal(pivots, expected_pivots)
        np.testing.assert_array_equal(to_bool(b, a.shape[1] * 64), expected)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(0, 48),
    ncols=st.integers(0, 200),
    density=st.sampled_from([0.03, 0.5, 0.97]),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_shapes(rows: int, ncols: int, density: float, seed: int) -> None:
    bits = np.random.default_rng(seed).random((rows, ncols)) < density
    assert_matches_oracle(from_bool(bits), ncols)


@pytest.mark.parametrize("rows,ncols", [(700, 700), (1100, 3000), (3000, 500)])
def test_parallel_equals_serial_and_gauss(rows: int, ncols: int, rng: np.random.Generator) -> None:
    """Large inputs: the parallel and serial M4RI and the plain Gauss-Jordan twin agree bit for bit."""
    a = random_matrix(rows, ncols, rng)
    a[rows // 2 :] = rank_deficient(rows - rows // 2, ncols, rows // 5, rng)
    serial, parallel = a.copy(), a.copy()
    p_serial = row_reduce(serial, ncols, parallel=False)
    p_parallel = row_reduce(parallel, ncols, parallel=True)
    p_gauss = m4ri._gauss_jordan(a, ncols)
    np.testing.assert_array_equal(p_serial, p_gauss)
    np.testing.assert_array_equal(p_parallel, p_gauss)
    np.testing.assert_array_equal(serial, a)
    np.testing.assert_array_equal(parallel, a)


def test_rref_structure_large(rng: np.random.Generator) -> None:
    """Without an oracle: pivots increase, pivot rows hold the identity on pivot columns, rest is zero."""
    rows, ncols = 1500, 1300
    a = rank_deficient(rows, ncols, 1000, rng)
    pivots = row_reduce(a, ncols)
    assert len(pivots) == 1000 and np.all(np.diff(pivots) > 0)
    bits = to_bool(a, ncols)
    np.testing.assert_array_equal(bits[: len(pivots)][:, pivots], np.eye(len(pivots), dtype=bool))
    assert not bits[len(pivots) :].any()
    assert np.all(np.argmax(bits[: len(pivots)], axis=1) == pivots)


def test_words_beyond_ncols_are_carried(rng: np.random.Generator) -> None:
    """Pivots only among the first ncols columns; row operations carry the tail along ([A | tail])."""
    rows, ncols, tail = 120, 100, 90
    a = random_matrix(rows, ncols + tail, rng)
    a[:, words(ncols) - 1] &= np.uint64((1 << (ncols % 64)) - 1)  # no bits in the first segment's padding
    head_only = np.ascontiguousarray(a[:, : words(ncols)])
    pivots = row_reduce(a, ncols)
    expected, expected_pivots = oracle_rref(head_only, ncols)
    np.testing.assert_array_equal(pivots, expected_pivots)
    np.testing.assert_array_equal(to_bool(np.ascontiguousarray(a[:, : words(ncols)]), ncols), expected)


def test_m4ri_tables_run_on_large_input(rng: np.random.Generator) -> None:
    """Structural: a large reduction goes through the M4RI kernel and builds tables (a revert to plain
    elimination leaves these counters unchanged)."""
    before = dict(COUNTERS)
    row_reduce(random_matrix(2048, 2048, rng), 2048, parallel=False)
    assert COUNTERS["calls"] == before["calls"] + 1
    assert COUNTERS["m4ri_calls"] == before["m4ri_calls"] + 1
    built = COUNTERS["tables"] - before["tables"]
    k = m4ri.choose_k(2048)
    assert 2048 // (m4ri.NTAB * k) <= built <= 2 * 2048 // k  # about one table per k pivots


def test_before_m4ri_is_compiled_mid_size_inputs_take_gauss_jordan(rng: np.random.Generator,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural, both ways: on a cold cache a 300 x 500 reduction skips M4RI (so a first small run never compiles
    it), a reduction above COLD_MAX_CELLS or past the work budget takes it; once compiled, 300 x 500 takes it again.
    The results match galois on every path."""
    monkeypatch.setitem(m4ri._COLD, "compiled", False)
    monkeypatch.setitem(m4ri._COLD, "work", 0)
    monkeypatch.setattr(m4ri, "_m4ri_serial", lambda a, ncols: m4ri._m4ri(a, ncols, 0))  # no marker from a test

    def m4ri_calls(rows: int, ncols: int) -> int:
        before = COUNTERS["m4ri_calls"]
        assert_matches_oracle(random_matrix(rows, ncols, rng), ncols)
        return COUNTERS["m4ri_calls"] - before

    assert m4ri_calls(300, 500) == 0
    assert m4ri._COLD["work"] == 300 * 300 * 8
    assert m4ri_calls(1100, 2048) == 1  # 1100 * 32 words > COLD_MAX_CELLS
    monkeypatch.setitem(m4ri._COLD, "work", m4ri.COLD_WORK_BUDGET)
    assert m4ri_calls(300, 500) == 1
    monkeypatch.setitem(m4ri._COLD, "work", 0)
    monkeypatch.setitem(m4ri._COLD, "compiled", True)
    assert m4ri_calls(300, 500) == 1


def test_the_first_m4ri_run_leaves_its_marker(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path) -> None:
    monkeypatch.setattr(m4ri.kernel_cache, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setitem(m4ri._COLD, "compiled", None)
    assert not m4ri.m4ri_compiled()
    row_reduce(random_matrix(1100, 2048, rng), 2048, parallel=False)
    assert (tmp_path / "cache" / m4ri.M4RI_MARKER).exists() and m4ri.m4ri_compiled()
    monkeypatch.setitem(m4ri._COLD, "compiled", None)  # a later run on the same cache
    assert m4ri.m4ri_compiled()


def test_tiny_input_skips_tables(rng: np.random.Generator) -> None:
    before = dict(COUNTERS)
    row_reduce(random_matrix(8, 8, rng), 8)
    assert COUNTERS["m4ri_calls"] == before["m4ri_calls"] and COUNTERS["tables"] == before["tables"]


@pytest.mark.parametrize("runnable,threads_expected", [(1, True), (50, False)])
def test_automatic_threads_need_idle_cores(runnable: int, threads_expected: bool, rng: np.random.Generator,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if numba.get_num_threads() < 2:
        pytest.skip("numba runs one thread here")
    monkeypatch.setattr(threads, "runnable_tasks", lambda: runnable)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    before = COUNTERS["parallel_calls"]
    row_reduce(random_matrix(2048, 2048, rng), 2048)
    assert COUNTERS["parallel_calls"] - before == int(threads_expected)
    before = COUNTERS["parallel_calls"]
    row_reduce(random_matrix(200, 200, rng), 200)  # small: never threads
    assert COUNTERS["parallel_calls"] == before


def test_kernels_release_the_gil() -> None:
    for kernel in (m4ri._m4ri, m4ri._gauss_jordan, m4ri._update_rows_parallel, m4ri._fill_tables_parallel):
        assert kernel.targetoptions.get("nogil") is True, kernel


def test_threads_reduce_concurrently(rng: np.random.Generator) -> None:
    mats = [random_matrix(300, 500, rng) for _ in range(6)]
    expected = [oracle_rref(m, 500)[0] for m in mats]
    results: list[np.ndarray | None] = [None] * len(mats)

    def work(i: int) -> None:
        b = mats[i].copy()
        row_reduce(b, 500)
        results[i] = to_bool(b, 500)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(mats))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "bad,ncols,message",
    [
        (np.zeros((2, 2), dtype=np.int64), 10, "dtype uint64"),
        (np.zeros(4, dtype=np.uint64), 10, "2-D"),
        (np.zeros((4, 4), dtype=np.uint64)[:, ::2], 10, "C-contiguous"),
        (np.zeros((2, 2), dtype=np.uint64), 129, "needs 3 words"),
        (np.zeros((2, 2), dtype=np.uint64), -1, ">= 0"),
        ([[0, 1]], 2, "numpy.ndarray"),
    ],
)
def test_bad_input_raises(bad, ncols: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        row_reduce(bad, ncols)


def test_a_serial_reduction_does_not_compile_the_threaded_code() -> None:
    """The serial kernel holds no reference to the parallel passes, so a run that never threads never compiles
    them (they cost a third of a first run's compile time)."""
    import inspect

    source = inspect.getsource(m4ri._m4ri.py_func)
    assert "_parallel" not in source.replace("_m4ri_threaded", "")


def test_the_small_kernel_compiles_without_numbas_array_machinery(tmp_path) -> None:
    """Structural (a first run after installation compiles it on every small reduction's path): on an empty cache,
    fp.m4ri.small_kernel compiles its two loops, Gauss-Jordan and a helper or two, not the broadcasting and message
    formatting behind slice assignments and view copies (join_list, _strncpy, ...: 4.2 s of a first run)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    probe = """
import json
import numpy as np
from numba.core import event
from fp.m4ri import small_kernel
from fp.packed import random_matrix
names = []
class Compiles(event.Listener):
    def on_start(self, ev):
        names.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Compiles())
small_kernel(random_matrix(5, 70, np.random.default_rng(1)), 70)
print(json.dumps(names))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NASSAU_NUMBA_BASE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parent.parent, env=env,
                         check=True, timeout=300, capture_output=True, text=True)
    names = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"_with_identity", "_split_rows", "_gauss_jordan"} <= set(names)
    # 12 compiles here; 56 with slices, most of them string formatting for error messages
    assert len(names) <= 16 and not {"join_list", "join_list_impl", "_strncpy"} & set(names), names
