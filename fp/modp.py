"""Dense matrices over F_p, p odd: one uint8 per entry, rows C-contiguous (DESIGN: the F_p layer).

One byte per entry keeps every kernel a plain loop that LLVM vectorises (32 or 64 entries per instruction), with
no unpacking: an elimination step adds a precomputed multiple of the pivot row and takes min(t, t - p) in bytes
(t - p wraps around when t < p), and a product accumulates f * b in int32 and reduces once per output entry.
Byte sums stay below 256 for p < 128; larger primes (to the reference's limit 251) take the same path with the
sum formed in a wider integer. The row reduction gives the unique RREF with every pivot 1, pivot rows first in
increasing pivot order, as sseq's does, so any correct reduction yields the same matrix.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import numpy as np
from numba import njit

from .modp_nibbles import PRIMES as NIBBLE_PRIMES
from .modp_nibbles import image_and_kernel as nibble_image_and_kernel
from .modp_nibbles import row_reduce_nibbles
from .row_blocks import RowBlocks, blocks, whole

#: Test hook: compiled calls made (a revert to Python loops shows here), and those on nibble-packed rows.
COUNTERS = {"rref_calls": 0, "matmul_calls": 0, "nibble_calls": 0, "small_kernel_calls": 0}
#: From this many rows a reduction at p = 3, 5, 7 runs on nibble-packed rows (fp.modp_nibbles): below it the
#: packing costs more than the halved memory traffic saves.
NIBBLE_MIN_ROWS = 48


@lru_cache(maxsize=None)
def inverses(p: int) -> np.ndarray:
    """inv[a] = a^-1 mod p (inv[0] = 0); one read-only table per p."""
    inv = np.zeros(p, dtype=np.int64)
    for a in range(1, p):
        inv[a] = pow(a, p - 2, p)
    inv.flags.writeable = False
    return inv


@njit(cache=True, nogil=True, inline="always")
def _add_row(dst, src, p8):
    """dst += src mod p on two uint8 rows with entries < p: min(t, t - p) in bytes (t - p wraps when t < p),
    which LLVM turns into byte-wide vector adds and minimums. For p >= 128 the sum can pass 255, so it is
    formed in a wider integer."""
    if p8 < 128:
        for j in range(dst.shape[0]):
            t = dst[j] + src[j]
            dst[j] = min(np.uint8(t), np.uint8(t - p8))
    else:
        for j in range(dst.shape[0]):
            t = np.int32(dst[j]) + np.int32(src[j])
            dst[j] = t - p8 if t >= p8 else t


@njit(cache=True, nogil=True)
def _rref(a, ncols, p, inv):
    rows = a.shape[0]
    width = a.shape[1]
    p8 = np.uint8(p)
    pivots = np.empty(min(rows, ncols), dtype=np.int64)
    multiple = np.zeros((p, width), dtype=np.uint8)
    ready = np.zeros(p, dtype=np.bool_)
    r = 0
    for c in range(ncols):
        if r == rows:
            break
        piv = -1
        for i in range(r, rows):
            if a[i, c] != 0:
                piv = i
                break
        if piv < 0:
            continue
        if piv != r:
            for j in range(c, width):
                tmp = a[r, j]
                a[r, j] = a[piv, j]
                a[piv, j] = tmp
        scale = inv[a[r, c]]
        if scale != 1:
            for j in range(c, width):
                a[r, j] = (a[r, j] * scale) % p
        ready[:] = False
        pivot_row = a[r, c:]
        for i in range(rows):
            f = a[i, c]
            if i == r or f == 0:
                continue
            g = p - f  # adding g * (pivot row) clears column c
            if not ready[g]:
                for j in range(c, width):
                    multiple[g, j] = (pivot_row[j - c] * g) % p
                ready[g] = True
            _add_row(a[i, c:], multiple[g, c:], p8)
        pivots[r] = c
        r += 1
    return pivots[:r]


def _packs(p: int, rows: int) -> bool:
    """Whether a reduction of this many rows at p takes the nibble-packed layout."""
    return p in NIBBLE_PRIMES and rows >= NIBBLE_MIN_ROWS


def row_reduce_modp(a: np.ndarray, ncols: int, p: int) -> np.ndarray:
    """Reduce `a` (uint8, rows x width, entries < p) IN PLACE to RREF; pivots are searched among columns < ncols
    and columns beyond are carried along. Returns the pivot columns (int64, increasing)."""
    check_dense(a, ncols, p)
    COUNTERS["rref_calls"] += 1
    if _packs(p, a.shape[0]):
        COUNTERS["nibble_calls"] += 1
        return row_reduce_nibbles(a, ncols, p, inverses(p))
    return _rref(a, ncols, p, inverses(p))


def small_quasi_inverse_modp(a: np.ndarray, ncols: int, p: int) -> tuple[np.ndarray, np.ndarray] | None:
    """A quasi-inverse of a small A (fewer than NIBBLE_MIN_ROWS rows): the image pivots and their preimage rows from
    [A | I] reduced in one compiled call, the very rows an Augmented gives (the RREF is unique), without its Python
    set-up, which costs more than the reduction of a block of a few rows (Nassau's signature blocks); None for a
    larger A."""
    if _packs(p, a.shape[0]):
        return None
    check_dense(a, ncols, p)
    COUNTERS["rref_calls"] += 1
    return _quasi_inverse(a, ncols, p, inverses(p))


@njit(cache=True, nogil=True)
def _with_identity(a, ncols, p, inv):
    """[A | I] reduced, its pivots, and how many of them lie in A (the image's; the rest are the kernel's)."""
    rows = a.shape[0]
    aug = np.zeros((rows, ncols + rows), dtype=np.uint8)
    aug[:, :ncols] = a[:, :ncols]
    for i in range(rows):
        aug[i, ncols + i] = 1
    pivots = _rref(aug, ncols + rows, p, inv)
    k = 0
    while k < pivots.shape[0] and pivots[k] < ncols:
        k += 1
    return aug, pivots, k


@njit(cache=True, nogil=True)
def _quasi_inverse(a, ncols, p, inv):
    aug, pivots, k = _with_identity(a, ncols, p, inv)
    return pivots[:k].copy(), aug[:k, ncols:].copy()


def image_and_kernel_modp(a: np.ndarray | RowBlocks, ncols: int,
                          p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """What reducing [A | I] gives (image pivots; ker A's RREF rows and their pivots) without an Augmented: where
    the packed layout serves (p in NIBBLE_PRIMES, NIBBLE_MIN_ROWS rows or more) without a byte copy of [A | I],
    for fewer rows in one compiled call (the Augmented's Python set-up costs more than reducing the few rows of a
    Nassau step's zero-signature block: 12314 of them in S_5 through stem 400); None elsewhere. A may come in row
    blocks (fp.row_blocks): the packing takes one at a time."""
    if len(a) < NIBBLE_MIN_ROWS:
        a = whole(a)
        check_dense(a, ncols, p)
        COUNTERS["rref_calls"] += 1
        COUNTERS["small_kernel_calls"] += 1
        return _image_and_kernel(a, ncols, p, inverses(p))
    if not _packs(p, len(a)):
        return None
    COUNTERS["rref_calls"] += 1
    COUNTERS["nibble_calls"] += 1
    return nibble_image_and_kernel(_checked(blocks(a), ncols, p), len(a), ncols, p, inverses(p))


@njit(cache=True, nogil=True)
def _image_and_kernel(a, ncols, p, inv):
    aug, pivots, k = _with_identity(a, ncols, p, inv)
    return pivots[:k].copy(), aug[k:, ncols:].copy(), pivots[k:] - ncols


def _checked(parts: Iterator[tuple[int, np.ndarray]], ncols: int, p: int) -> Iterator[tuple[int, np.ndarray]]:
    """The blocks, each checked as it comes (before its packing, which trusts its input)."""
    for r0, block in parts:
        check_dense(block, ncols, p)
        yield r0, block


@njit(cache=True, nogil=True)
def _addmul(c, a, b, k, p):
    n = c.shape[1]
    acc = np.empty(n, dtype=np.int32)
    for i in range(a.shape[0]):
        acc[:] = 0
        touched = False
        for l in range(k):
            f = np.int32(a[i, l])
            if f == 0:
                continue
            touched = True
            for j in range(n):
                acc[j] += f * b[l, j]
            if l % 4096 == 4095:  # keep int32 exact: at most 4096 * 250 * 250 < 2^31 between reductions
                for j in range(n):
                    acc[j] %= p
        if touched:
            for j in range(n):
                c[i, j] = (c[i, j] + acc[j]) % p


def addmul_modp(c: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n: int, p: int) -> None:
    """C += A B mod p in place (A m x k, B k x n, C m x n; dense uint8)."""
    if a.shape[0] != c.shape[0] or b.shape[0] < k or a.shape[1] < k or c.shape[1] != n or b.shape[1] != n:
        raise ValueError(f"shapes do not match: A {a.shape}, B {b.shape}, C {c.shape}, k={k}, n={n}")
    if a.shape[0] and k and n:
        COUNTERS["matmul_calls"] += 1
        _addmul(c, a, b, k, p)


def check_dense(a: np.ndarray, ncols: int, p: int) -> None:
    """Raise ValueError unless `a` is a C-contiguous uint8 matrix holding at least ncols columns, p < 256."""
    if not (isinstance(a, np.ndarray) and a.dtype == np.uint8 and a.ndim == 2 and a.flags.c_contiguous):
        raise ValueError("an F_p matrix must be a C-contiguous 2-D numpy.uint8 array")
    if not 0 <= ncols <= a.shape[1]:
        raise ValueError(f"ncols={ncols} does not fit a matrix of width {a.shape[1]}")
    if not 2 < p < 256:
        raise ValueError(f"odd primes below 256 only, got p = {p}")
