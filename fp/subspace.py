"""A subspace of F^ncols (F2 or F_p) held as an RREF basis with its pivot columns (sseq's Subspace).

Because the basis is reduced (identity on the pivot columns), reducing many vectors is one product:
V -= V[:, pivots] * basis. Adding rows reduces only the new rows, then clears their pivots from the old basis with
one more product and merges the two sorted pivot lists, so repeated small additions do not re-reduce the basis.
"""
from __future__ import annotations

import numpy as np

from .field import F2, field


class Subspace:
    """RREF basis (dim x storage(ncols), pivot rows in increasing pivot order, pivots 1) and its pivot columns,
    over F2 (packed, the default) or F_p."""

    def __init__(self, ncols: int, field_: F2 | None = None) -> None:
        if ncols < 0:
            raise ValueError(f"ncols must be >= 0, got {ncols}")
        self.ncols = ncols
        self.field = field(2) if field_ is None else field_
        self._basis = self.field.zeros(0, ncols)
        self._pivots = np.zeros(0, dtype=np.int64)

    @classmethod
    def from_rref(cls, basis: np.ndarray, pivots: np.ndarray, ncols: int, field_: F2 | None = None) -> "Subspace":
        """Wrap rows already in RREF with their pivots (for instance the kernel rows of a reduced [A | I]).
        Trusted: only shapes are checked."""
        space = cls(ncols, field_)
        space._check_rows(basis)
        pivots = np.asarray(pivots, dtype=np.int64)
        if pivots.shape != (basis.shape[0],):
            raise ValueError(f"{basis.shape[0]} basis rows need as many pivots, got shape {pivots.shape}")
        space._basis = basis
        space._pivots = pivots
        return space

    @property
    def dim(self) -> int:
        return self._basis.shape[0]

    @property
    def basis(self) -> np.ndarray:
        """The RREF basis rows (packed). Do not modify."""
        return self._basis

    @property
    def pivots(self) -> np.ndarray:
        """Pivot column of each basis row, increasing."""
        return self._pivots

    def _check_rows(self, rows: np.ndarray) -> None:
        self.field.check(rows, self.ncols)
        if rows.shape[1] != self.field.storage(self.ncols):
            raise ValueError(f"rows have {rows.shape[1]} {self.field.unit_name}, expected {self.field.storage(self.ncols)}")

    def reduce(self, vectors: np.ndarray) -> np.ndarray:
        """Reduce row vectors IN PLACE by the basis (zero at every pivot column); returns them.

        The result is the canonical representative of each vector modulo the subspace."""
        self._check_rows(vectors)
        if self.dim and vectors.shape[0]:
            coeffs = self.field.negate(self.field.gather(vectors, self._pivots))
            self.field.addmul(vectors, coeffs, self._basis, self.dim, self.ncols)
        return vectors

    def contains(self, v: np.ndarray) -> bool:
        """Whether the vector v (one row, 1-D or 1 x storage) lies in the subspace."""
        row = np.array(v, dtype=self.field.dtype, ndmin=2, copy=True)
        if row.shape[0] != 1:
            raise ValueError(f"contains takes one vector, got shape {np.shape(v)}")
        return not self.reduce(row).any()

    def contains_rows(self, vectors: np.ndarray) -> np.ndarray:
        """Bool per row: whether it lies in the subspace."""
        return ~self.reduce(vectors.copy()).any(axis=1)

    def add_rows(self, rows: np.ndarray) -> int:
        """Add the span of `rows`; keeps the basis in RREF. Returns how many dimensions were new."""
        self._check_rows(rows)
        new = self.reduce(rows.copy())
        new_pivots = self.field.row_reduce(new, self.ncols)
        rank = new_pivots.shape[0]
        if rank == 0:
            return 0
        new = new[:rank]
        old = self._basis.copy()  # never write into an array handed to from_rref
        if self.dim:
            self.field.addmul(old, self.field.negate(self.field.gather(old, new_pivots)), new, rank, self.ncols)
        pivots = np.concatenate([self._pivots, new_pivots])
        order = np.argsort(pivots, kind="stable")
        self._basis = np.ascontiguousarray(np.concatenate([old, new])[order])
        self._pivots = pivots[order]
        return rank
