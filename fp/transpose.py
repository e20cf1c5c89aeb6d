"""The transpose of a packed F2 matrix with both orders reversed, 64 x 64 bits at a time.

fp.left_kernel reduces A^T with A's rows and columns both reversed, and reads its solver back the same way. A walk
over the set bits (one scattered write per bit, where the motivic step's blocks are about half ones) took 7 of the
60 s of S_2 over A^C through stem 70; a 64 x 64 block is transposed in six rounds of word swaps, its words' bits
reversed, and each shifted into place: a few operations per word, whatever the density. tests/test_fp_transpose.py
compares it bit for bit with the twin on unpacked bits, on random matrices of every alignment.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_ONE = np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _reverse_bits(x):
    """The 64 bits of x in reverse order."""
    x = ((x >> np.uint64(1)) & np.uint64(0x5555555555555555)) | ((x & np.uint64(0x5555555555555555)) << np.uint64(1))
    x = ((x >> np.uint64(2)) & np.uint64(0x3333333333333333)) | ((x & np.uint64(0x3333333333333333)) << np.uint64(2))
    x = ((x >> np.uint64(4)) & np.uint64(0x0F0F0F0F0F0F0F0F)) | ((x & np.uint64(0x0F0F0F0F0F0F0F0F)) << np.uint64(4))
    x = ((x >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)) | ((x & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8))
    x = ((x >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)) | ((x & np.uint64(0x0000FFFF0000FFFF))
                                                                  << np.uint64(16))
    return (x >> np.uint64(32)) | (x << np.uint64(32))


@njit(cache=True, nogil=True, inline="always")
def _transpose_block(x):
    """x (64 words, bit c of word r the entry (r, c)) transposed in place."""
    j = 32
    m = np.uint64(0x00000000FFFFFFFF)
    while j:
        shift = np.uint64(j)
        for k in range(64):
            if k & j == 0:
                t = ((x[k] >> shift) ^ x[k + j]) & m
                x[k + j] ^= t
                x[k] ^= t << shift
        j >>= 1
        m ^= m << np.uint64(j)
    return x


@njit(cache=True, nogil=True)
def transpose_reversed_into(src, nrows, ncols, out):
    """out[ncols - 1 - c, nrows - 1 - r] |= src[r, c] for r < nrows, c < ncols (src packed rows, at least nrows of
    them, zero past column ncols; out packed, ncols rows and at least words(nrows) words each, its other words left
    alone)."""
    block = np.zeros(64, dtype=np.uint64)
    for r0 in range(0, nrows, 64):
        rows = min(64, nrows - r0)
        base = nrows - 64 - r0  # where bit 0 of a reversed word lands: row r0 + 63 - p goes to nrows - 1 - r0 - 63 + p
        for w in range((ncols + 63) >> 6):
            for k in range(64):
                block[k] = src[r0 + k, w] if k < rows else np.uint64(0)
            _transpose_block(block)
            for k in range(min(64, ncols - (w << 6))):
                x = _reverse_bits(block[k])  # bit p: row r0 + 63 - p of column 64 w + k
                if not x:
                    continue
                j = ncols - 1 - ((w << 6) + k)
                if base >= 0:
                    lo, sh = base >> 6, np.uint64(base & 63)
                    out[j, lo] |= x << sh
                    if sh:
                        spill = x >> (np.uint64(64) - sh)
                        if spill:  # bits below nrows only: never past out's words(nrows)
                            out[j, lo + 1] |= spill
                else:  # the last, partial block: its missing rows are the low bits, all zero
                    out[j, 0] |= x >> np.uint64(-base)
    return out
