"""A matrix handed over as a builder of its row ranges, for a reduction that can take it a block at a time.

The packed reduction at p = 3, 5, 7 (fp.modp_nibbles.image_and_kernel) packs [A | I] row by row, so it needs no
more of A than the rows it is packing: built in blocks of about BLOCK_BYTES, A never exists whole beside its
packing (the largest d of S_3 through stem 200, s <= 50, is 2484 x 2462 bytes, 5.8 MiB, as large as the packing).
Every other consumer asks for the matrix whole, which is built once and then kept.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

#: About how many bytes of a matrix one block holds (at least one row): a few matrix calls for the largest d.
BLOCK_BYTES = 1 << 18


class RowBlocks:
    def __init__(self, rows: int, row_bytes: int, build: Callable[[int, int], np.ndarray]) -> None:
        """rows: how many; row_bytes: the storage of one; build(r0, r1): rows r0..r1 - 1 as a matrix."""
        self.rows = rows
        self.row_bytes = row_bytes
        self._build = build
        self._whole: np.ndarray | None = None

    def __len__(self) -> int:
        return self.rows

    def whole(self) -> np.ndarray:
        if self._whole is None:
            self._whole = self._build(0, self.rows)
        return self._whole

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, the rows of one block) in order, each built when asked for (the whole one if it was)."""
        if self._whole is not None:
            yield 0, self._whole
            return
        step = max(1, BLOCK_BYTES // max(1, self.row_bytes))
        for r0 in range(0, self.rows, step):
            yield r0, self._build(r0, min(self.rows, r0 + step))


def whole(a: np.ndarray | RowBlocks) -> np.ndarray:
    """The matrix itself, however it was handed over."""
    return a.whole() if isinstance(a, RowBlocks) else a


def blocks(a: np.ndarray | RowBlocks) -> Iterator[tuple[int, np.ndarray]]:
    """The matrix a block at a time (a plain array is one block)."""
    return a.blocks() if isinstance(a, RowBlocks) else iter([(0, a)])
