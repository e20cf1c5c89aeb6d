"""Quasi-inverse of a linear map A (sseq's QuasiInverse): sends each vector of the image of A to a preimage.

Built from the RREF of [A | I]: the rows whose pivot lies in A are (r, x) with x A = r, and the r form an RREF basis
of the image. For y in the image, y = sum of the r_j at y's pivot columns (the r_j are the identity there), so a
preimage is the sum of the matching x_j. For many vectors at once that is one product:
X = Y[:, pivot_cols] * Preimage. Columns of y that are not pivots are ignored, so the answer is only meaningful
for y in the image.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bits import ctz
from .field import F2, field
from .packed import check_matrix


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

    def correct(self, rem: np.ndarray, cols: np.ndarray, rows: np.ndarray, image: np.ndarray, y: np.ndarray) -> None:
        """Cancel the part of the rows of rem on the columns `cols` (this map's target), in place, over F2: x = the
        preimages of rem[:, cols] (over this map's source), then y[:, rows] ^= x and rem ^= x image, where image
        holds the full images of the source rows (rem's width). One compiled pass for what apply, a column scatter
        and a product do (a Nassau correction, made for every signature of every step); they are its twin. Over F_p
        (p odd) it is those steps, with y += x and rem -= x image."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        if self.field.p != 2:
            self._correct_modp(rem, cols, rows, image, y)
            return
        check_matrix(rem, 0)
        if image.shape[1] != rem.shape[1] or image.shape[0] != self.source_dim or len(rows) != self.source_dim:
            raise ValueError(f"image {image.shape} and {len(rows)} rows do not fit rem {rem.shape} and a source of "
                             f"dimension {self.source_dim}")
        if y.shape[0] != rem.shape[0] or (len(rows) and int(rows.max()) >= 64 * y.shape[1]):
            raise ValueError(f"y {y.shape} does not hold the rows of rem {rem.shape} over those source rows")
        if self.pivots.size and int(cols.max()) >= 64 * rem.shape[1]:
            raise ValueError(f"the columns reach past rem {rem.shape}")
        _correct(rem, cols, self.pivots, self.preimage, rows, image, y)

    def _correct_modp(self, rem: np.ndarray, cols: np.ndarray, rows: np.ndarray, image: np.ndarray,
                      y: np.ndarray) -> None:
        f, p = self.field, self.field.p
        if image.shape != (self.source_dim, rem.shape[1]) or len(rows) != self.source_dim:
            raise ValueError(f"image {image.shape} and {len(rows)} rows do not fit rem {rem.shape} and a source of "
                             f"dimension {self.source_dim}")
        x = self.apply(f.gather(rem, cols))
        y[:, rows] = (y[:, rows].astype(np.int64) + x) % p
        rem[:] = (rem.astype(np.int64) + f.negate(f.matmul(x, image, self.source_dim, rem.shape[1]))) % p


@njit(cache=True, nogil=True)
def _correct(rem, cols, pivots, preimage, rows, image, y):
    local = np.zeros(preimage.shape[1], dtype=np.uint64)
    for v in range(rem.shape[0]):
        local[:] = 0
        for j in range(pivots.shape[0]):
            c = cols[pivots[j]]
            if (rem[v, c >> 6] >> np.uint64(c & 63)) & np.uint64(1):
                for w in range(local.shape[0]):
                    local[w] ^= preimage[j, w]
        for w in range(local.shape[0]):
            x = local[w]
            while x:
                i = w * 64 + ctz(x)
                r = rows[i]
                y[v, r >> 6] ^= np.uint64(1) << np.uint64(r & 63)
                for u in range(rem.shape[1]):
                    rem[v, u] ^= image[i, u]
                x &= x - np.uint64(1)
