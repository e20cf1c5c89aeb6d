"""The packed layout: bit order, padding, round trips and the validation every kernel relies on."""
from __future__ import annotations

import numpy as np
import pytest

from fp.packed import check_matrix, from_bool, random_matrix, to_bool, words, zeros


def test_words() -> None:
    assert [words(n) for n in (0, 1, 63, 64, 65, 128, 129)] == [0, 1, 1, 1, 2, 2, 3]


def test_bit_order_is_lsb_first() -> None:
    bits = np.zeros((1, 130), dtype=bool)
    bits[0, [0, 5, 64, 129]] = True
    a = from_bool(bits)
    assert a.dtype == np.uint64 and a.shape == (1, 3) and a.flags.c_contiguous
    assert a[0, 0] == (1 << 0) | (1 << 5) and a[0, 1] == 1 and a[0, 2] == 2


@pytest.mark.parametrize("rows,ncols", [(0, 0), (0, 5), (3, 0), (1, 1), (5, 64), (7, 65), (4, 200)])
def test_round_trip(rows: int, ncols: int, rng: np.random.Generator) -> None:
    bits = rng.random((rows, ncols)) < 0.5
    a = from_bool(bits)
    assert a.shape == (rows, words(ncols))
    np.testing.assert_array_equal(to_bool(a, ncols), bits)


@pytest.mark.parametrize("ncols", [1, 63, 64, 65, 1000])
def test_random_matrix_padding_is_zero(ncols: int, rng: np.random.Generator) -> None:
    a = random_matrix(400, ncols, rng)
    full = to_bool(a, a.shape[1] * 64)
    assert not full[:, ncols:].any()
    assert full[:, :ncols].mean() == pytest.approx(0.5, abs=0.15)  # >= 6 standard deviations


def test_zeros() -> None:
    a = zeros(3, 70)
    assert a.shape == (3, 2) and a.dtype == np.uint64 and not a.any()


def test_check_matrix_accepts_wider_rows() -> None:
    check_matrix(np.zeros((2, 3), dtype=np.uint64), 100)  # words beyond ncols are allowed (augmented tails)


@pytest.mark.parametrize(
    "bad,ncols,message",
    [
        (np.zeros((2, 2), dtype=np.uint32), 10, "dtype uint64"),
        (np.zeros((2, 2), dtype=">u8"), 10, "dtype uint64"),
        (np.zeros((2, 2, 2), dtype=np.uint64), 10, "2-D"),
        (np.asfortranarray(np.zeros((3, 2), dtype=np.uint64)), 10, "C-contiguous"),
        (np.zeros((2, 1), dtype=np.uint64), 65, "needs 2 words"),
        (np.zeros((2, 1), dtype=np.uint64), -3, ">= 0"),
        ("not an array", 1, "numpy.ndarray"),
    ],
)
def test_check_matrix_errors(bad, ncols: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_matrix(bad, ncols)


def test_from_bool_rejects_1d() -> None:
    with pytest.raises(ValueError, match="2-D"):
        from_bool(np.zeros(5, dtype=bool))
