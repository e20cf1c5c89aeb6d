"""Row reduction over F_p for small p (3, 5, 7) on rows packed 16 entries to a 64-bit word.

The large reductions of a resolution at p = 3 are dense [A | I] eliminations that stream every row past the pivot
row once per pivot, so they are bound by memory traffic: four bits per entry move half the bytes of one byte per
entry (and sseq packs three bits). Sums of two entries stay below 16 (2p - 2 <= 12), so a row addition is
t = x + y on whole words, then each nibble at least p loses p: nibble + (8 - p) carries into its own bit 3 exactly
when the nibble is >= p (at most 13, so no carry leaves the nibble). The result is the same unique RREF as the byte
kernel's (fp.modp), which the tests compare on fresh random matrices.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

#: The primes this layout serves: 2p - 2 + (8 - p) < 16.
PRIMES = (3, 5, 7)
_HIGH = np.uint64(0x8888888888888888)
_ONES = np.uint64(0x1111111111111111)


def pack(a: np.ndarray) -> np.ndarray:
    """Rows of bytes (entries < 16) as rows of words, entry j in bits 4 (j % 16) of word j // 16."""
    rows, width = a.shape
    packed = np.zeros((rows, (width + 15) >> 4), dtype=np.uint64)
    _pack(a, packed)
    return packed


def unpack(packed: np.ndarray, a: np.ndarray) -> None:
    """The inverse of pack, written into `a`."""
    _unpack(packed, a)


@njit(cache=True, nogil=True)
def _pack(a, packed):
    """A compiled pass, a word at a time (numpy's strided pairing took 8% of an S_3 run)."""
    rows, width = a.shape
    full = width >> 4
    for i in range(rows):
        for w in range(full):
            v = np.uint64(0)
            for k in range(16):
                v |= np.uint64(a[i, 16 * w + k]) << np.uint64(4 * k)
            packed[i, w] = v
        v = np.uint64(0)
        for j in range(16 * full, width):
            v |= np.uint64(a[i, j]) << np.uint64(4 * (j & 15))
        if width & 15:
            packed[i, full] = v


@njit(cache=True, nogil=True)
def _unpack(packed, a):
    rows, width = a.shape
    full = width >> 4
    for i in range(rows):
        for w in range(full):
            v = packed[i, w]
            for k in range(16):
                a[i, 16 * w + k] = (v >> np.uint64(4 * k)) & np.uint64(15)
        for j in range(16 * full, width):
            a[i, j] = (packed[i, full] >> np.uint64(4 * (j & 15))) & np.uint64(15)


@njit(cache=True, nogil=True, inline="always")
def _nibble(a, i, c):
    return (a[i, c >> 4] >> np.uint64(4 * (c & 15))) & np.uint64(15)


@njit(cache=True, nogil=True, inline="always")
def _add(dst, i, src, g, w0, bias, p):
    """dst[i, w0:] += src[g, w0:] mod p, nibble by nibble. Indexed in place, not through row views: a view made
    inside the elimination loop costs reference-count updates on every call."""
    for w in range(np.uint64(w0), np.uint64(dst.shape[1])):
        t = dst[i, w] + src[g, w]
        dst[i, w] = t - (((t + bias) & _HIGH) >> np.uint64(3)) * p


@njit(cache=True, nogil=True)
def _rref_packed(a, ncols, p, inv):
    rows, nw = a.shape
    up = np.uint64(p)
    bias = _ONES * np.uint64(8 - p)
    pivots = np.empty(min(rows, ncols), dtype=np.int64)
    multiple = np.zeros((p, nw), dtype=np.uint64)
    ready = np.zeros(p, dtype=np.bool_)
    r = 0
    for c in range(ncols):
        if r == rows:
            break
        piv = -1
        for i in range(r, rows):
            if _nibble(a, i, c) != 0:
                piv = i
                break
        if piv < 0:
            continue
        w0 = c >> 4
        if piv != r:
            for w in range(w0, nw):
                tmp = a[r, w]
                a[r, w] = a[piv, w]
                a[piv, w] = tmp
        scale = inv[_nibble(a, r, c)]
        if scale != 1:  # the pivot row times scale, by repeated addition
            for w in range(w0, nw):
                multiple[1, w] = a[r, w]
            for _ in range(scale - 1):
                _add(a, r, multiple, 1, w0, bias, up)
        ready[:] = False
        for w in range(w0, nw):
            multiple[1, w] = a[r, w]
        ready[1] = True
        for i in range(rows):
            f = _nibble(a, i, c)
            if i == r or f == 0:
                continue
            g = p - np.int64(f)  # adding g times the pivot row clears column c
            if not ready[g]:
                for h in range(2, g + 1):
                    if not ready[h]:
                        for w in range(w0, nw):
                            multiple[h, w] = multiple[h - 1, w]
                        _add(multiple, h, multiple, 1, w0, bias, up)
                        ready[h] = True
            _add(a, i, multiple, g, w0, bias, up)
        pivots[r] = c
        r += 1
    return pivots[:r]


def row_reduce_nibbles(a: np.ndarray, ncols: int, p: int, inv: np.ndarray) -> np.ndarray:
    """fp.modp.row_reduce_modp's result for p in PRIMES: pack, reduce, unpack back into `a`."""
    packed = pack(a)
    pivots = _rref_packed(packed, ncols, p, inv)
    unpack(packed, a)
    return pivots


def image_and_kernel(blocks: Iterable[tuple[int, np.ndarray]], rows: int, ncols: int, p: int,
                     inv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For A (bytes, rows x ncols, entries < p; as (first row, rows) blocks in order, fp.row_blocks): the pivot
    columns of its image and ker A (over A's rows) as RREF byte rows with their pivots, what [A | I] reduced gives.
    [A | I] is packed straight from A's blocks as they come (the identity placed as it packs) and only the kernel
    rows are unpacked, so neither A whole nor a byte copy of [A | I] need exist: the largest step of S_3 through
    stem 200 held A (5.8 MiB), [A | I] in bytes (12 MiB) and its packing (6 MiB); this holds the packing and one
    block."""
    packed = np.zeros((rows, (ncols + rows + 15) >> 4), dtype=np.uint64)
    for r0, block in blocks:
        _pack_with_identity(block, packed[r0:r0 + block.shape[0]], ncols, r0)
    pivots = _rref_packed(packed, ncols + rows, p, inv)  # rank `rows`: the identity has full rank
    rank = int(np.searchsorted(pivots, ncols))
    kernel = np.zeros((rows - rank, rows), dtype=np.uint8)
    _unpack_block(packed, rank, ncols, kernel)
    return pivots[:rank], kernel, pivots[rank:] - ncols


@njit(cache=True, nogil=True)
def _pack_with_identity(a, packed, ncols, first):
    """Pack rows first.. of A into `packed` (their rows), the identity's 1 of row first + i at ncols + first + i."""
    _pack(a, packed)
    for i in range(a.shape[0]):
        c = ncols + first + i
        packed[i, c >> 4] |= np.uint64(1) << np.uint64(4 * (c & 15))


@njit(cache=True, nogil=True)
def _unpack_block(packed, r0, c0, out):
    """out[k, j] = entry (r0 + k, c0 + j) of the packed rows."""
    for k in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = _nibble(packed, r0 + k, c0 + j)
