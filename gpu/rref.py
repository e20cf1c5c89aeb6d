"""Entry point for large row reductions on the device: `try_row_reduce`, the device twin of fp's row_reduce.

Why the result is exactly fp's: without columns beyond `ncols` (no augmented tail), the reduced row echelon
form of a matrix is unique, and row_reduce's output is that form with the pivot rows first, in pivot order,
and zero rows after. The device computes the same form by another elimination order (gpu/kernels/rref.cu:
one 64-column panel at a time, rows never moved, pivot rows gathered at the end), so it returns the same
bits and pivots. With a tail the rows' tail bits depend on the elimination order, so such matrices stay
on the CPU, as do matrices below NASSAU_GPU_RREF_MIN (the device pays only for large ones, REFERENCE 3.4).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from gpu import config, counters, device, trace
from gpu.errors import GpuVerifyError

#: The panel loop asks the device whether every row already holds a pivot this often (a host sync).
CHECK_EVERY = 32
TABLES, TABLE_SIZE, PANEL = 8, 256, 64


def _eligible(a: np.ndarray, ncols: int, rref_min: int) -> bool:
    return (isinstance(a, np.ndarray) and a.dtype == np.uint64 and a.ndim == 2 and a.flags.c_contiguous
            and min(a.shape[0], ncols) >= rref_min and a.shape[1] == (ncols + 63) // 64 and a.shape[0] < 2**31)


def try_row_reduce(a: np.ndarray, ncols: int, bidegree: tuple[int, int] | None = None, *,
                   cpu: Callable[[np.ndarray, int], np.ndarray] | None = None) -> np.ndarray | None:
    """Reduce `a` in place to RREF on the device and return its pivot columns (int64), or return None untouched.

    None means the caller reduces on the CPU: the device is off, min(rows, ncols) < NASSAU_GPU_RREF_MIN, or
    `a` has words beyond ncols. Every call of at least trace.TRACE_MIN emits one trace event with the path
    taken. With NASSAU_GPU_VERIFY=1, `cpu(copy, ncols)` (fp's row_reduce) must be given; it reduces a copy
    and any difference in bits or pivots raises GpuVerifyError.
    """
    cfg = config.current()
    dev = device.current()
    on_device = dev is not None and _eligible(a, ncols, cfg.rref_min)
    trace.reduction(a.shape[0], ncols, "gpu" if on_device else "cpu", bidegree)
    if not on_device:
        return None
    expected = None
    if cfg.verify:
        if cpu is None:
            raise ValueError("NASSAU_GPU_VERIFY=1 needs the CPU reduction to compare with (try_row_reduce cpu=...)")
        expected = a.copy()
        expected_pivots = cpu(expected, ncols)
    pivots = reduce_on_device(dev, a, ncols)
    if expected is not None and not (np.array_equal(pivots, expected_pivots) and np.array_equal(a, expected)):
        rows = np.flatnonzero((a != expected).any(axis=1))
        raise GpuVerifyError(f"NASSAU_GPU_VERIFY: device RREF of {a.shape[0]} x {ncols} differs from the CPU: "
                             f"rank {len(pivots)} vs {len(expected_pivots)}, {len(rows)} rows differ")
    return pivots


def reduce_on_device(dev: device.Device, a: np.ndarray, ncols: int) -> np.ndarray:
    """RREF of `a` (no tail) through the panel kernels; `a` is overwritten with the result."""
    xp = dev.xp
    m, nw = a.shape
    weight = 2 * a.nbytes + (TABLES * TABLE_SIZE + PANEL) * nw * 8 + m * 28
    with dev.section(), dev.admission.admit(weight):
        A = dev.upload(a)
        flag = xp.full(m, -1, dtype=xp.int32)
        xr, xc, coef = (xp.zeros(m, dtype=xp.uint64) for _ in range(3))
        state = xp.zeros(3, dtype=xp.int64)
        pos, prow = xp.zeros(PANEL, dtype=xp.int64), xp.zeros(PANEL, dtype=xp.int64)
        comb = xp.zeros(PANEL, dtype=xp.uint64)
        pivot_row = xp.zeros(max(1, min(m, ncols)), dtype=xp.int64)
        pivot_col = xp.zeros_like(pivot_row)
        U = xp.zeros((PANEL, nw), dtype=xp.uint64)
        tables = xp.zeros((TABLES, TABLE_SIZE, nw), dtype=xp.uint64)
        m64, nw64 = np.int64(m), np.int64(nw)
        for w in range(nw):
            width = nw - w
            w64 = np.int64(w)
            valid = np.uint64((1 << min(64, ncols - 64 * w)) - 1)
            dev.launch("rref_search", dev.block_threads, (A, m64, nw64, w64, valid, flag, xr, xc, state, pos, prow,
                                                          comb, pivot_row, pivot_col), block=dev.block_threads)
            dev.launch("rref_combine", PANEL * width, (A, nw64, w64, state, prow, comb, U))
            dev.launch("rref_tables", TABLES * TABLE_SIZE * width, (U, nw64, w64, state, tables))
            dev.launch("rref_coef", m, (A, m64, nw64, w64, flag, state, pos, coef))
            dev.launch("rref_update", m * width, (A, m64, nw64, w64, flag, state, coef, U, tables))
            if (w + 1) % CHECK_EVERY == 0 and int(dev.download(state[:1])[0]) == m:
                break
        rank = int(dev.download(state[:1])[0])
        a[:rank] = dev.download(A[pivot_row[:rank]])
        a[rank:] = 0
        pivots = dev.download(pivot_col[:rank])
    counters.add("device_rrefs")
    counters.debug(f"rref: {m} x {ncols} on the device, rank {rank}")
    return pivots
