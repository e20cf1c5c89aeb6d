"""fp.transpose against its twin on unpacked bits: the transpose with both orders reversed, bit for bit, on random
packed matrices of every alignment (rows and columns around multiples of 64), into fresh rows and into rows whose
other words must be left alone."""
from __future__ import annotations

import numpy as np
import pytest

from fp.packed import from_bool, to_bool, words
from fp.transpose import transpose_reversed_into


def twin(bits: np.ndarray) -> np.ndarray:
    """out[ncols - 1 - c, nrows - 1 - r] = bits[r, c]."""
    return bits.T[::-1, ::-1]


@pytest.mark.parametrize("nrows, ncols", [(1, 1), (63, 65), (64, 64), (65, 63), (128, 1), (1, 200), (130, 190),
                                          (200, 7), (0, 5), (5, 0)])
def test_transpose_reversed_matches_the_twin(rng: np.random.Generator, nrows: int, ncols: int) -> None:
    for density in (0.02, 0.5, 0.98):
        bits = rng.random((nrows, ncols)) < density
        src = from_bool(bits) if nrows else np.zeros((0, words(ncols)), dtype=np.uint64)
        out = np.zeros((ncols, words(nrows)), dtype=np.uint64)
        transpose_reversed_into(src, nrows, ncols, out)
        assert np.array_equal(to_bool(out, nrows), twin(bits))


def test_words_past_the_transpose_are_left_alone(rng: np.random.Generator) -> None:
    """Written into the first words(nrows) words of wider rows (as [A^T | I] is built), the rest kept as it was."""
    for _ in range(20):
        nrows, ncols = (int(x) for x in rng.integers(1, 300, size=2))
        bits = rng.random((nrows, ncols)) < 0.5
        tail = rng.integers(0, 2**63, size=(ncols, 3), dtype=np.uint64)
        out = np.concatenate([np.zeros((ncols, words(nrows)), dtype=np.uint64), tail], axis=1)
        transpose_reversed_into(from_bool(bits), nrows, ncols, out)
        assert np.array_equal(to_bool(np.ascontiguousarray(out[:, :words(nrows)]), nrows), twin(bits))
        assert np.array_equal(out[:, words(nrows):], tail)
