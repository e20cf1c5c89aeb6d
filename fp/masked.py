"""Moving columns between a full basis and a sub-basis (sseq's add_masked / add_unmasked), for all rows at once.

A mask lists, for each column i of the sub-basis, its column mask[i] in the full basis.

- Increasing masks (the usual case: signature masks list basis indices in order) are cut per full-basis word into
  a bit mask M; a gather is then one pext per touched word (its bits appended to the sub-basis row), a scatter one
  pdep per touched word. Cost per row ~ the number of touched words, whatever the density.
- Other masks are cut into runs of consecutive values, each moved up to 64 bits at a time with shifts.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import pdep, pext
from .packed import check_matrix, words

_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = ~np.uint64(0)


@njit(cache=True, nogil=True)
def _mask_words(mask, limit):
    """For an increasing mask: (full-basis word indices, bit mask in each word, bits in each word).
    status: 0 ok, 1 not increasing, 2 a value outside [0, limit)."""
    n = mask.shape[0]
    widx = np.empty(n, dtype=np.int64)
    bits = np.zeros(n, dtype=np.uint64)
    cnt = np.zeros(n, dtype=np.int64)
    count = 0
    prev = -1
    status = 0
    for i in range(n):
        v = mask[i]
        if v < 0 or v >= limit:
            status = 2
            break
        if v <= prev:
            status = 1
        prev = v
        w = v >> 6
        if count == 0 or widx[count - 1] != w:
            widx[count] = w
            count += 1
        bits[count - 1] |= _ONE << np.uint64(v & 63)
        cnt[count - 1] += 1
    return status, widx[:count], bits[:count], cnt[:count]


@njit(cache=True, nogil=True)
def _gather_sorted(dst, src, widx, bits, cnt):
    """dst row r ^= concatenation of pext(src[r, widx[j]], bits[j]) over j."""
    for r in range(dst.shape[0]):
        acc = _ZERO
        fill = 0
        out = 0
        for j in range(widx.shape[0]):
            v = pext(src[r, widx[j]], bits[j])
            c = cnt[j]
            acc |= v << np.uint64(fill)
            fill += c
            if fill >= 64:
                dst[r, out] ^= acc
                out += 1
                fill -= 64
                acc = v >> np.uint64(c - fill) if fill > 0 else _ZERO
        if fill > 0:
            dst[r, out] ^= acc


@njit(cache=True, nogil=True)
def _scatter_sorted(dst, src, widx, bits, cnt):
    """dst[r, widx[j]] ^= pdep(next cnt[j] bits of src row r, bits[j])."""
    nws = src.shape[1]
    for r in range(dst.shape[0]):
        pos = 0
        for j in range(widx.shape[0]):
            c = cnt[j]
            w = pos >> 6
            s = np.uint64(pos & 63)
            x = src[r, w] >> s
            if s != 0 and w + 1 < nws:
                x |= src[r, w + 1] << (np.uint64(64) - s)
            if c < 64:
                x &= (_ONE << np.uint64(c)) - _ONE
            dst[r, widx[j]] ^= pdep(x, bits[j])
            pos += c


@njit(cache=True, nogil=True)
def _runs(mask):
    """Cut `mask` into runs of consecutive values: (sub-basis start, full-basis start, length) arrays."""
    n = mask.shape[0]
    sub = np.empty(n, dtype=np.int64)
    full = np.empty(n, dtype=np.int64)
    length = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(n):
        v = mask[i]
        if count > 0 and full[count - 1] + length[count - 1] == v:
            length[count - 1] += 1
        else:
            sub[count] = i
            full[count] = v
            length[count] = 1
            count += 1
    return sub[:count], full[:count], length[:count]


ROW_BLOCK = 32
"""Rows per block in the run kernel: a run's shifts are decoded once per block and applied down its rows."""


@njit(cache=True, nogil=True)
def _xor_runs(dst, src, dst_start, src_start, length):
    """For every row r and run j: dst[r, dst_start[j] + t] ^= src[r, src_start[j] + t] for t < length[j]."""
    nw_src = src.shape[1]
    rows = dst.shape[0]
    for r0 in range(0, rows, ROW_BLOCK):
        r1 = min(r0 + ROW_BLOCK, rows)
        for j in range(length.shape[0]):
            d = dst_start[j]
            s = src_start[j]
            left = length[j]
            while left > 0:
                n = min(64, left)
                sw = s >> 6
                sb = np.uint64(s & 63)
                spill_src = sb != 0 and sw + 1 < nw_src
                keep = _ALL if n == 64 else (_ONE << np.uint64(n)) - _ONE
                dw = d >> 6
                db = np.uint64(d & 63)
                spill_dst = db != 0 and np.uint64(n) + db > np.uint64(64)
                for r in range(r0, r1):
                    x = src[r, sw] >> sb
                    if spill_src:
                        x |= src[r, sw + 1] << (np.uint64(64) - sb)
                    x &= keep
                    dst[r, dw] ^= x << db
                    if spill_dst:
                        dst[r, dw + 1] ^= x >> (np.uint64(64) - db)
                d += n
                s += n
                left -= n


def _check_mask(mask: np.ndarray) -> np.ndarray:
    if not isinstance(mask, np.ndarray) or mask.ndim != 1 or mask.dtype.kind not in "iu":
        raise ValueError("mask must be a 1-D integer numpy array")
    return mask.astype(np.int64, copy=False)


def _check_move(dst: np.ndarray, src: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Validate the operands of a move; returns the mask as int64."""
    check_matrix(dst, 0)
    check_matrix(src, 0)
    if dst.shape[0] != src.shape[0]:
        raise ValueError(f"dst has {dst.shape[0]} rows but src has {src.shape[0]}")
    return _check_mask(mask)


def _check_sub_width(mask: np.ndarray, sub: np.ndarray) -> None:
    if mask.shape[0] > sub.shape[1] * 64:
        raise ValueError(f"mask has {mask.shape[0]} entries but the sub-basis rows hold {sub.shape[1] * 64} columns")


def _move(dst: np.ndarray, src: np.ndarray, mask: np.ndarray, full_words: int, gather: bool) -> None:
    status, widx, bits, cnt = _mask_words(mask, full_words * 64)
    if status == 2:
        raise ValueError(f"mask values must lie in [0, {full_words * 64}) (the full-basis rows' columns)")
    if status == 0:
        (_gather_sorted if gather else _scatter_sorted)(dst, src, widx, bits, cnt)
    else:
        sub, full, length = _runs(mask)
        if gather:
            _xor_runs(dst, src, sub, full, length)
        else:
            _xor_runs(dst, src, full, sub, length)


def add_masked(dst: np.ndarray, src: np.ndarray, mask: np.ndarray) -> None:
    """Gather (full -> sub-basis), in place: dst[:, i] ^= src[:, mask[i]] for every row and every i."""
    mask = _check_move(dst, src, mask)
    _check_sub_width(mask, dst)
    _move(dst, src, mask, src.shape[1], gather=True)


def add_unmasked(dst: np.ndarray, src: np.ndarray, mask: np.ndarray) -> None:
    """Scatter (sub -> full basis), in place: dst[:, mask[i]] ^= src[:, i] for every row and every i."""
    mask = _check_move(dst, src, mask)
    _check_sub_width(mask, src)
    _move(dst, src, mask, dst.shape[1], gather=False)


def any_in_columns(src: np.ndarray, mask: np.ndarray) -> bool:
    """Whether some row of src has a 1 in one of the columns `mask` (gather_columns(src, mask).any() without the
    copy)."""
    check_matrix(src, 0)
    mask = _check_mask(mask)
    if len(mask) and int(mask.max()) >= 64 * src.shape[1]:
        raise ValueError(f"mask values must lie in [0, {64 * src.shape[1]})")
    return bool(_any_in_columns(src, mask))


@njit(cache=True, nogil=True)
def _any_in_columns(src, mask):
    for c in mask:
        w, bit = c >> 6, np.uint64(1) << np.uint64(c & 63)
        for v in range(src.shape[0]):
            if src[v, w] & bit:
                return True
    return False


def gather_columns(src: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A new packed matrix whose column i is column mask[i] of src."""
    check_matrix(src, 0)
    mask = _check_mask(mask)
    dst = np.zeros((src.shape[0], words(len(mask))), dtype=np.uint64)
    add_masked(dst, src, mask)
    return dst


def scatter_columns(src: np.ndarray, mask: np.ndarray, ncols: int) -> np.ndarray:
    """A new packed matrix with `ncols` columns whose column mask[i] is column i of src, zero elsewhere."""
    check_matrix(src, 0)
    mask = _check_mask(mask)
    if len(mask) and int(mask.max()) >= ncols:
        raise ValueError(f"mask values must lie in [0, {ncols}) (ncols={ncols})")
    dst = np.zeros((src.shape[0], words(ncols)), dtype=np.uint64)
    add_unmasked(dst, src, mask)
    return dst
