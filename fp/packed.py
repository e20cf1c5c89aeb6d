"""Packed F2 matrices: the layout contract every other module in `fp` relies on.

A matrix is a C-contiguous ``numpy.uint64`` array of shape (rows, words). Column j is bit j % 64 of word j // 64,
least significant bit first (the layout of libm4ri and of sseq's ``fp``), and the padding bits of the last word
(columns >= ncols) are zero. Keeping padding zero means a row is zero iff all its words are zero, and that two
equal matrices are equal word for word.
"""
from __future__ import annotations

import numpy as np

WORD_BITS = 64


def words(ncols: int) -> int:
    """Number of uint64 words that hold `ncols` columns."""
    return (ncols + WORD_BITS - 1) // WORD_BITS


_U64 = np.dtype(np.uint64)


def check_matrix(a: np.ndarray, ncols: int) -> None:
    """Raise ValueError unless `a` is a packed matrix that can hold `ncols` columns.

    Cheap on purpose (one combined test on the fast path, no scan of the data, so padding is not checked): it runs
    in front of every kernel call.
    """
    if (
        type(a) is np.ndarray
        and a.dtype is _U64
        and a.ndim == 2
        and a.flags.c_contiguous
        and 0 <= ncols <= a.shape[1] * WORD_BITS
    ):
        return
    if not isinstance(a, np.ndarray):
        raise ValueError(f"packed matrix must be a numpy.ndarray, got {type(a).__name__}")
    if a.dtype != np.uint64:
        raise ValueError(f"packed matrix must have dtype uint64, got {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"packed matrix must be 2-D (rows, words), got {a.ndim}-D shape {a.shape}")
    if not a.flags.c_contiguous:
        raise ValueError("packed matrix must be C-contiguous (use numpy.ascontiguousarray)")
    if ncols < 0:
        raise ValueError(f"ncols must be >= 0, got {ncols}")
    if words(ncols) > a.shape[1]:
        raise ValueError(f"ncols={ncols} needs {words(ncols)} words per row but the matrix has {a.shape[1]}")


def zeros(rows: int, ncols: int) -> np.ndarray:
    """A zero packed matrix of `rows` x `ncols`."""
    return np.zeros((rows, words(ncols)), dtype=np.uint64)


def from_bool(bits: np.ndarray) -> np.ndarray:
    """Pack a boolean (or 0/1 integer) array of shape (rows, ncols)."""
    bits = np.asarray(bits)
    if bits.ndim != 2:
        raise ValueError(f"bits must be 2-D (rows, ncols), got shape {bits.shape}")
    rows, ncols = bits.shape
    nbytes = words(ncols) * 8
    packed_bytes = np.packbits(bits.astype(bool, copy=False), axis=1, bitorder="little")
    out = np.zeros((rows, nbytes), dtype=np.uint8)
    out[:, : packed_bytes.shape[1]] = packed_bytes
    return out.view("<u8").astype(np.uint64, copy=False).reshape(rows, words(ncols))


def to_bool(a: np.ndarray, ncols: int) -> np.ndarray:
    """Unpack the first `ncols` columns of a packed matrix into a bool array (rows, ncols)."""
    check_matrix(a, ncols)
    as_bytes = a.astype("<u8", copy=False).view(np.uint8).reshape(a.shape[0], a.shape[1] * 8)
    return np.unpackbits(as_bytes, axis=1, count=ncols, bitorder="little").astype(bool)


def random_matrix(rows: int, ncols: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random packed matrix with zero padding (for tests and benchmarks)."""
    a = rng.integers(0, np.iinfo(np.uint64).max, size=(rows, words(ncols)), dtype=np.uint64, endpoint=True)
    mask_padding(a, ncols)
    return a


def mask_padding(a: np.ndarray, ncols: int) -> None:
    """Zero the padding bits (columns >= ncols) of the last word of every row, in place."""
    tail = ncols % WORD_BITS
    if a.shape[1] and tail:
        a[:, words(ncols) - 1] &= np.uint64((1 << tail) - 1)
    a[:, words(ncols):] = 0


def stack(vectors: list[np.ndarray], dtype: np.dtype = np.dtype(np.uint64)) -> np.ndarray:
    """Vectors of (possibly) different widths as the rows of one array, zero-padded to the widest: packed F2 words
    by default, or another field's units (uint8 entries over F_p)."""
    out = np.zeros((len(vectors), max((len(v) for v in vectors), default=0)), dtype=dtype)
    for k, v in enumerate(vectors):
        out[k, :len(v)] = v
    return out
