"""Augmented matrices [A | I], [A | B | I], ... whose column segments each start at a word boundary.

Word-aligned segments make every segment a plain slice of words, so filling one and reading it back after the
reduction cost no shifts (sseq's AugmentedMatrix does the same). The columns between a segment's end and the
next word boundary are zero, never pivots.

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

from .m4ri import row_reduce
from .packed import WORD_BITS, check_matrix, words
from .quasi_inverse import QuasiInverse
from .subspace import Subspace


class Augmented:
    """A packed matrix of `rows` rows split into column segments of the given widths."""

    def __init__(self, rows: int, widths: Sequence[int]) -> None:
        if rows < 0:
            raise ValueError(f"rows must be >= 0, got {rows}")
        if not widths or any(w < 0 for w in widths):
            raise ValueError(f"segment widths must be a non-empty list of non-negative ints, got {list(widths)}")
        self.widths = [int(w) for w in widths]
        self.starts = np.cumsum([0] + [words(w) for w in self.widths]).tolist()  # word offset of each segment
        self.matrix = np.zeros((rows, self.starts[-1]), dtype=np.uint64)

    @property
    def rows(self) -> int:
        return self.matrix.shape[0]

    @property
    def ncols(self) -> int:
        """Columns up to the end of the last segment (the ncols to row-reduce with)."""
        return self.starts[-2] * WORD_BITS + self.widths[-1]

    def _check_seg(self, seg: int) -> None:
        if not 0 <= seg < len(self.widths):
            raise ValueError(f"segment {seg} does not exist (there are {len(self.widths)})")

    def segment_words(self, seg: int) -> tuple[int, int]:
        """Word range [start, end) of segment `seg` in each row."""
        self._check_seg(seg)
        return self.starts[seg], self.starts[seg + 1]

    def segment_columns(self, seg: int) -> tuple[int, int]:
        """Absolute column range [start, end) of segment `seg`."""
        w0, _ = self.segment_words(seg)
        return w0 * WORD_BITS, w0 * WORD_BITS + self.widths[seg]

    def segment(self, seg: int) -> np.ndarray:
        """A (non-contiguous) view of segment `seg`: rows x words(width)."""
        w0, w1 = self.segment_words(seg)
        return self.matrix[:, w0:w1]

    def set_segment(self, seg: int, block: np.ndarray, row0: int = 0) -> None:
        """Copy a packed block (its rows go to rows row0, row0 + 1, ...) into segment `seg`."""
        w0, w1 = self.segment_words(seg)
        check_matrix(block, self.widths[seg])
        if block.shape[1] != w1 - w0:
            raise ValueError(f"block has {block.shape[1]} words, segment {seg} has {w1 - w0}")
        if not 0 <= row0 <= self.rows - block.shape[0]:
            raise ValueError(f"{block.shape[0]} rows from row {row0} do not fit in {self.rows} rows")
        self.matrix[row0 : row0 + block.shape[0], w0:w1] = block

    def fill_identity(self, seg: int) -> None:
        """Put the identity in segment `seg`: row i gets column i of the segment, for i < min(rows, width)."""
        w0, w1 = self.segment_words(seg)
        self.matrix[:, w0:w1] = 0
        n = min(self.rows, self.widths[seg])
        i = np.arange(n)
        self.matrix[i, w0 + i // WORD_BITS] = np.left_shift(np.uint64(1), (i % WORD_BITS).astype(np.uint64))

    def row_reduce(self, *, parallel: bool | None = None) -> np.ndarray:
        """Reduce the whole matrix in place to RREF; returns the absolute pivot columns."""
        return row_reduce(self.matrix, self.ncols, parallel=parallel)

    def _rows_in(self, pivots: np.ndarray, seg: int) -> tuple[int, int]:
        """Row range whose pivots lie in segment `seg` (pivot rows are in increasing pivot order)."""
        c0, c1 = self.segment_columns(seg)
        return int(np.searchsorted(pivots, c0)), int(np.searchsorted(pivots, c1))

    def _restrict(self, r0: int, r1: int, seg: int) -> np.ndarray:
        w0, w1 = self.segment_words(seg)
        return np.ascontiguousarray(self.matrix[r0:r1, w0:w1])

    def kernel(self, pivots: np.ndarray, seg: int) -> Subspace:
        """Rows whose pivot lies in `seg`, restricted to `seg`, as an RREF Subspace of F2^width(seg)."""
        r0, r1 = self._rows_in(pivots, seg)
        c0, _ = self.segment_columns(seg)
        return Subspace.from_rref(self._restrict(r0, r1, seg), pivots[r0:r1] - c0, self.widths[seg])

    def image(self, pivots: np.ndarray, seg_a: int, first_source_seg: int) -> np.ndarray:
        """Rows whose pivot lies before segment `first_source_seg`, restricted to `seg_a` (packed)."""
        c_source, _ = self.segment_columns(first_source_seg)
        r1 = int(np.searchsorted(pivots, c_source))
        return self._restrict(0, r1, seg_a)

    def quasi_inverse(self, pivots: np.ndarray, target_seg: int, source_seg: int) -> QuasiInverse:
        """Pivots (relative to `target_seg`) of the rows whose pivot lies there, and their `source_seg` parts."""
        r0, r1 = self._rows_in(pivots, target_seg)
        c0, _ = self.segment_columns(target_seg)
        return QuasiInverse(pivots[r0:r1] - c0, self._restrict(r0, r1, source_seg), self.widths[source_seg])
