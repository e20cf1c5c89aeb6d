"""Augmented matrices [A | I], [A | B | I], ... whose column segments each start at a storage boundary, and the
three uses of [A | I] reduced that every layer above needs: its RREF, a quasi-inverse of A, A's image and kernel.

Aligned segments make every segment a plain slice of storage units (words over F2, bytes over F_p), so filling
one and reading it back after the reduction cost no shifts (sseq's AugmentedMatrix does the same). The columns
between a segment's end and the next boundary are zero, never pivots.

After `row_reduce`, with the pivots it returned (absolute columns, increasing, pivot rows first):
- `kernel(pivots, seg)`: the rows whose pivot lies in `seg`, restricted to `seg`. For [A | I] with seg = the I
  segment these rows are (0, x) with x A = 0, and they form an RREF basis of ker A.
- `image(pivots, seg_a, first_source_seg)`: the rows whose pivot lies before `first_source_seg`, restricted to
  `seg_a` (for [A | I]: an RREF basis of the image of A).
- `quasi_inverse(pivots, target_seg, source_seg)`: rows with pivot in `target_seg`, their pivots relative to that
  segment, and their `source_seg` part as the preimages.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .field import F2, field
from .quasi_inverse import QuasiInverse
from .row_blocks import RowBlocks, whole
from .subspace import Subspace


class Augmented:
    """A matrix over `field` (F2 by default) of `rows` rows split into column segments of the given widths."""

    def __init__(self, rows: int, widths: Sequence[int], field_: F2 | None = None) -> None:
        if rows < 0:
            raise ValueError(f"rows must be >= 0, got {rows}")
        if not widths or any(w < 0 for w in widths):
            raise ValueError(f"segment widths must be a non-empty list of non-negative ints, got {list(widths)}")
        self.field = field(2) if field_ is None else field_
        self.widths = [int(w) for w in widths]
        # storage offset of each segment
        self.starts = np.cumsum([0] + [self.field.storage(w) for w in self.widths]).tolist()
        self.matrix = np.zeros((rows, self.starts[-1]), dtype=self.field.dtype)

    @property
    def rows(self) -> int:
        return self.matrix.shape[0]

    @property
    def ncols(self) -> int:
        """Columns up to the end of the last segment (the ncols to row-reduce with)."""
        return self.starts[-2] * self.field.unit + self.widths[-1]

    def _check_seg(self, seg: int) -> None:
        if not 0 <= seg < len(self.widths):
            raise ValueError(f"segment {seg} does not exist (there are {len(self.widths)})")

    def segment_words(self, seg: int) -> tuple[int, int]:
        """Storage range [start, end) of segment `seg` in each row (words over F2)."""
        self._check_seg(seg)
        return self.starts[seg], self.starts[seg + 1]

    def segment_columns(self, seg: int) -> tuple[int, int]:
        """Absolute column range [start, end) of segment `seg`."""
        w0, _ = self.segment_words(seg)
        return w0 * self.field.unit, w0 * self.field.unit + self.widths[seg]

    def segment(self, seg: int) -> np.ndarray:
        """A (non-contiguous) view of segment `seg`: rows x storage(width)."""
        w0, w1 = self.segment_words(seg)
        return self.matrix[:, w0:w1]

    def set_segment(self, seg: int, block: np.ndarray, row0: int = 0) -> None:
        """Copy a block (its rows go to rows row0, row0 + 1, ...) into segment `seg`."""
        w0, w1 = self.segment_words(seg)
        self.field.check(block, self.widths[seg])
        if block.shape[1] != w1 - w0:
            raise ValueError(f"block has {block.shape[1]} {self.field.unit_name}, segment {seg} has {w1 - w0}")
        if not 0 <= row0 <= self.rows - block.shape[0]:
            raise ValueError(f"{block.shape[0]} rows from row {row0} do not fit in {self.rows} rows")
        self.matrix[row0 : row0 + block.shape[0], w0:w1] = block

    def fill_identity(self, seg: int) -> None:
        """Put the identity in segment `seg`: row i gets column i of the segment, for i < min(rows, width)."""
        w0, w1 = self.segment_words(seg)
        self.matrix[:, w0:w1] = 0
        n = min(self.rows, self.widths[seg])
        self.matrix[:n, w0:w0 + self.field.storage(n)] = self.field.identity(n)

    def row_reduce(self, *, parallel: bool | None = None) -> np.ndarray:
        """Reduce the whole matrix in place to RREF; returns the absolute pivot columns."""
        return self.field.row_reduce(self.matrix, self.ncols, parallel=parallel)

    def _rows_in(self, pivots: np.ndarray, seg: int) -> tuple[int, int]:
        """Row range whose pivots lie in segment `seg` (pivot rows are in increasing pivot order)."""
        c0, c1 = self.segment_columns(seg)
        return int(np.searchsorted(pivots, c0)), int(np.searchsorted(pivots, c1))

    def _restrict(self, r0: int, r1: int, seg: int) -> np.ndarray:
        w0, w1 = self.segment_words(seg)
        return np.ascontiguousarray(self.matrix[r0:r1, w0:w1])

    def kernel(self, pivots: np.ndarray, seg: int) -> Subspace:
        """Rows whose pivot lies in `seg`, restricted to `seg`, as an RREF Subspace of F^width(seg)."""
        r0, r1 = self._rows_in(pivots, seg)
        c0, _ = self.segment_columns(seg)
        return Subspace.from_rref(self._restrict(r0, r1, seg), pivots[r0:r1] - c0, self.widths[seg], self.field)

    def image(self, pivots: np.ndarray, seg_a: int, first_source_seg: int) -> np.ndarray:
        """Rows whose pivot lies before segment `first_source_seg`, restricted to `seg_a`."""
        c_source, _ = self.segment_columns(first_source_seg)
        r1 = int(np.searchsorted(pivots, c_source))
        return self._restrict(0, r1, seg_a)

    def quasi_inverse(self, pivots: np.ndarray, target_seg: int, source_seg: int) -> QuasiInverse:
        """Pivots (relative to `target_seg`) of the rows whose pivot lies there, and their `source_seg` parts."""
        r0, r1 = self._rows_in(pivots, target_seg)
        c0, _ = self.segment_columns(target_seg)
        return QuasiInverse(pivots[r0:r1] - c0, self._restrict(r0, r1, source_seg), self.widths[source_seg],
                            self.field)


def reduced_with_identity(a: np.ndarray, ncols: int, field_: F2 | None = None) -> tuple[Augmented, np.ndarray]:
    """[A | I] (A is rows x ncols over the field, F2 packed by default) in reduced row echelon form, and its
    pivot columns."""
    aug = Augmented(a.shape[0], [ncols, a.shape[0]], field_)
    aug.set_segment(0, a)
    aug.fill_identity(1)
    return aug, aug.row_reduce()


def quasi_inverse_with_identity(a: np.ndarray, ncols: int, field_: F2 | None = None) -> QuasiInverse:
    """A quasi-inverse of A (rows x ncols over the field) from [A | I] reduced: the field's Augmented-free path
    where it has one (a small A over F2: every Nassau signature block), an Augmented elsewhere."""
    f = field(2) if field_ is None else field_
    split = f.quasi_inverse(a, ncols)
    if split is not None:
        return QuasiInverse(split[0], split[1], a.shape[0], f)
    aug, pivots = reduced_with_identity(a, ncols, field_)
    return aug.quasi_inverse(pivots, 0, 1)


def reduce_with_identity(a: np.ndarray | RowBlocks, ncols: int,
                         field_: F2 | None = None) -> tuple[np.ndarray, Subspace]:
    """Row-reduce [A | I]; return the pivot columns of A's image and the RREF kernel of A (over A's rows). A may
    come in row blocks (a resolution's differential), built whole only where the reduction takes it whole.

    Without rows or without columns [A | I] is already reduced (no image, every row in the kernel): half the
    steps of a resolution over a small algebra such as A(1) are such empty ones, not worth an Augmented. Where the
    field has a path that builds none (a small A over F2; a large one at p = 3, 5, 7: field.image_and_kernel), it
    takes it."""
    f = field(2) if field_ is None else field_
    if len(a) == 0 or ncols == 0:
        rows = np.arange(len(a), dtype=np.int64)
        return rows[:0], Subspace.from_rref(f.identity(len(rows)), rows, len(rows), f)
    split = f.image_and_kernel(a, ncols)
    if split is not None:
        image, basis, pivots = split
        return image, Subspace.from_rref(basis, pivots, len(a), f)
    aug, pivots = reduced_with_identity(whole(a), ncols, field_)
    return pivots[pivots < aug.segment_columns(1)[0]], aug.kernel(pivots, 1)
