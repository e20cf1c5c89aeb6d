"""The two fields the engine computes over, behind one interface: F2 on packed rows, F_p (p odd) on bytes.

Everything above fp (resolution steps, augmented matrices, subspaces, quasi-inverses) is written once against
this interface. A matrix is a 2-D array whose rows hold `storage(ncols)` units of `dtype`; a unit holds
`unit` columns (64 for F2, one for F_p), so column offsets of aligned segments are unit multiples.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .m4ri import row_reduce, small_kernel
from .masked import any_in_columns, gather_columns, scatter_columns
from .matmul import gf2_addmul, gf2_matmul
from .modp import addmul_modp, check_dense, image_and_kernel_modp, row_reduce_modp, small_quasi_inverse_modp
from .packed import WORD_BITS, check_matrix, from_bool, to_bool, words
from .row_blocks import RowBlocks, whole

#: The largest identity F2 keeps a copy of.
_KEPT_IDENTITY = 2048


def _packed_identity(n: int) -> np.ndarray:
    out = np.zeros((n, words(n)), dtype=np.uint64)
    i = np.arange(n)
    out[i, i // WORD_BITS] = np.left_shift(np.uint64(1), (i % WORD_BITS).astype(np.uint64))
    return out


@lru_cache(maxsize=1)
def _kept_identity() -> np.ndarray:
    out = _packed_identity(_KEPT_IDENTITY)
    out.flags.writeable = False
    return out


class F2:
    p = 2
    dtype = np.dtype(np.uint64)
    unit = WORD_BITS
    unit_name = "words"

    @staticmethod
    def storage(ncols: int) -> int:
        return words(ncols)

    def zeros(self, rows: int, ncols: int) -> np.ndarray:
        return np.zeros((rows, words(ncols)), dtype=np.uint64)

    def check(self, a: np.ndarray, ncols: int) -> None:
        check_matrix(a, ncols)

    def row_reduce(self, a: np.ndarray, ncols: int, parallel: bool | None = None) -> np.ndarray:
        return row_reduce(a, ncols, parallel=parallel)

    def image_and_kernel(self, a: np.ndarray | RowBlocks,
                         ncols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """[A | I] reduced and split (image pivots, kernel RREF rows, their pivots) by a path that builds no
        Augmented, where this field has one for A's size (a small A: fp.m4ri.small_kernel); None elsewhere. A may
        come in row blocks (fp.row_blocks); here it is asked for whole."""
        split = small_kernel(whole(a), ncols)
        return None if split is None else (split[0], split[2], split[3])

    def quasi_inverse(self, a: np.ndarray, ncols: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The image pivots of A and their preimages (a QuasiInverse of A) without an Augmented, where A is small;
        None elsewhere."""
        split = small_kernel(a, ncols)
        return None if split is None else (split[0], split[1])

    def addmul(self, c: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n: int) -> None:
        gf2_addmul(c, a, b, k, n)

    def matmul(self, a: np.ndarray, b: np.ndarray, k: int, n: int) -> np.ndarray:
        return gf2_matmul(a, b, k, n)

    def gather(self, a: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return gather_columns(a, cols)

    def scatter(self, a: np.ndarray, cols: np.ndarray, ncols: int) -> np.ndarray:
        return scatter_columns(a, cols, ncols)

    def negate(self, a: np.ndarray) -> np.ndarray:
        return a

    def subtract(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a - b, a new matrix."""
        return a ^ b

    def any_in(self, a: np.ndarray, cols: np.ndarray) -> bool:
        """Whether some row of `a` is nonzero in one of the columns `cols`."""
        return any_in_columns(a, cols)

    def from_ints(self, a: np.ndarray) -> np.ndarray:
        return from_bool(np.asarray(a) % 2 != 0)

    def to_ints(self, a: np.ndarray, ncols: int) -> np.ndarray:
        return to_bool(a, ncols).astype(np.uint8)

    def support(self, a: np.ndarray) -> np.ndarray:
        """The columns where some row of `a` is nonzero."""
        used = np.bitwise_or.reduce(a, axis=0) if len(a) else np.zeros(a.shape[1], dtype=np.uint64)
        return np.nonzero(np.unpackbits(used.view(np.uint8), bitorder="little"))[0]

    def identity(self, n: int) -> np.ndarray:
        """A fresh n x n identity: a copy of the corner of a kept one (2048 columns, 512 KiB) when it fits, which
        costs a fifth of setting n bits (every job of a small algebra makes one)."""
        if n > _KEPT_IDENTITY:
            return _packed_identity(n)
        return _kept_identity()[:n, :words(n)].copy()

    def __repr__(self) -> str:
        return "F2"


class PrimeField:
    dtype = np.dtype(np.uint8)
    unit = 1
    unit_name = "entries"

    def __init__(self, p: int) -> None:
        self.p = p

    @staticmethod
    def storage(ncols: int) -> int:
        return ncols

    def zeros(self, rows: int, ncols: int) -> np.ndarray:
        return np.zeros((rows, ncols), dtype=np.uint8)

    def check(self, a: np.ndarray, ncols: int) -> None:
        check_dense(a, ncols, self.p)

    def row_reduce(self, a: np.ndarray, ncols: int, parallel: bool | None = None) -> np.ndarray:
        return row_reduce_modp(a, ncols, self.p)

    def image_and_kernel(self, a: np.ndarray | RowBlocks,
                         ncols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """As F2's (here: the packed layout's, which never copies [A | I] in bytes and packs A a block at a time)."""
        return image_and_kernel_modp(a, ncols, self.p)

    def quasi_inverse(self, a: np.ndarray, ncols: int) -> tuple[np.ndarray, np.ndarray] | None:
        """As F2's (fp.modp.small_quasi_inverse_modp: Nassau's signature blocks)."""
        return small_quasi_inverse_modp(a, ncols, self.p)

    def addmul(self, c: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n: int) -> None:
        addmul_modp(c, a, b, k, n, self.p)

    def matmul(self, a: np.ndarray, b: np.ndarray, k: int, n: int) -> np.ndarray:
        c = np.zeros((a.shape[0], n), dtype=np.uint8)
        addmul_modp(c, a, b, k, n, self.p)
        return c

    def gather(self, a: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a[:, np.asarray(cols, dtype=np.int64)])

    def scatter(self, a: np.ndarray, cols: np.ndarray, ncols: int) -> np.ndarray:
        out = np.zeros((a.shape[0], ncols), dtype=np.uint8)
        out[:, np.asarray(cols, dtype=np.int64)] = a[:, : len(cols)]
        return out

    def negate(self, a: np.ndarray) -> np.ndarray:
        return ((self.p - a.astype(np.int64)) % self.p).astype(np.uint8)

    def subtract(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a - b, a new matrix."""
        return ((a.astype(np.int64) - b) % self.p).astype(np.uint8)

    def any_in(self, a: np.ndarray, cols: np.ndarray) -> bool:
        """Whether some row of `a` is nonzero in one of the columns `cols`."""
        return bool(a[:, np.asarray(cols, dtype=np.int64)].any())

    def from_ints(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(a, dtype=np.int64) % self.p, dtype=np.uint8)

    def to_ints(self, a: np.ndarray, ncols: int) -> np.ndarray:
        return np.ascontiguousarray(a[:, :ncols])

    def support(self, a: np.ndarray) -> np.ndarray:
        """The columns where some row of `a` is nonzero."""
        return np.nonzero(a.any(axis=0))[0]

    def identity(self, n: int) -> np.ndarray:
        """A fresh n x n identity."""
        return np.eye(n, dtype=np.uint8)

    def __repr__(self) -> str:
        return f"F{self.p}"


@lru_cache(maxsize=None)
def field(p: int) -> F2 | PrimeField:
    """The field of p elements (p = 2 or an odd prime below 256)."""
    return F2() if p == 2 else PrimeField(p)
