"""Quasi-inverse of a linear map A (sseq's QuasiInverse): sends each vector of the image of A to a preimage.

Built from the RREF of [A | I]: the rows whose pivot lies in A are (r, x) with x A = r, and the r form an RREF basis
of the image. For y in the image, y = sum of the r_j at y's pivot columns (the r_j are the identity there), so a
preimage is the sum of the matching x_j. For many vectors at once that is one product:
X = Y[:, pivot_cols] * Preimage. Columns of y that are not pivots are ignored, so the answer is only meaningful
for y in the image.
"""
from __future__ import annotations

import numpy as np

from .field import F2, field


class QuasiInverse:
    """pivots: image pivot column (in the target) of each preimage row; preimage: image_dim x source_dim over the
    field (F2 packed by default). Over F_p the image rows have pivot 1, so y's pivot entries are the coefficients."""

    def __init__(self, pivots: np.ndarray, preimage: np.ndarray, source_dim: int, field_: F2 | None = None) -> None:
        pivots = np.asarray(pivots, dtype=np.int64)
        self.field = field(2) if field_ is None else field_
        self.field.check(preimage, source_dim)
        if preimage.shape[1] != self.field.storage(source_dim):
            raise ValueError(f"preimage has {preimage.shape[1]} {self.field.unit_name}, expected {self.field.storage(source_dim)}")
        if pivots.shape != (preimage.shape[0],):
            raise ValueError(f"{preimage.shape[0]} preimage rows need as many pivots, got shape {pivots.shape}")
        self.pivots = pivots
        self.preimage = preimage
        self.source_dim = source_dim
        self._columns_needed = int(pivots.max()) + 1 if pivots.size else 0

    @property
    def image_dim(self) -> int:
        return self.preimage.shape[0]

    def apply(self, y: np.ndarray) -> np.ndarray:
        """Preimages of the rows of y (m x target), all in one product: m x source_dim."""
        self.field.check(y, self._columns_needed)
        coeffs = self.field.gather(y, self.pivots)
        return self.field.matmul(coeffs, self.preimage, self.image_dim, self.source_dim)
