"""Augmented [A | I] and [A | B | I]: kernels, images and quasi-inverses checked by multiplying back."""
from __future__ import annotations

import numpy as np
import pytest

from fp.augmented import Augmented
from fp.matmul import gf2_matmul
from fp.packed import random_matrix, to_bool, words, zeros
from fp.quasi_inverse import QuasiInverse
from tests.oracles.fp_matrices import oracle_rref, rank_deficient

SHAPES = [(1, 1), (5, 7), (40, 30), (64, 64), (100, 300), (300, 100), (257, 129), (600, 500)]


def reduced(a: np.ndarray, ncols: int) -> tuple[Augmented, np.ndarray]:
    aug = Augmented(a.shape[0], [ncols, a.shape[0]])
    aug.set_segment(0, a)
    aug.fill_identity(1)
    return aug, aug.row_reduce()


@pytest.mark.parametrize("rows,ncols", SHAPES)
def test_kernel_image_quasi_inverse(rows: int, ncols: int, rng: np.random.Generator) -> None:
    a = rank_deficient(rows, ncols, max(1, min(rows, ncols) // 2), rng)
    expected_image, image_pivots = oracle_rref(a, ncols)
    rank = len(image_pivots)
    aug, pivots = reduced(a, ncols)

    kernel = aug.kernel(pivots, 1)
    assert kernel.dim + rank == rows
    assert not gf2_matmul(kernel.basis, a, rows, ncols).any()
    _, kernel_pivots = oracle_rref(kernel.basis, rows)
    np.testing.assert_array_equal(kernel.pivots, kernel_pivots)  # already RREF

    image = aug.image(pivots, 0, 1)
    np.testing.assert_array_equal(to_bool(image, ncols), expected_image[:rank])

    qi = aug.quasi_inverse(pivots, 0, 1)
    assert qi.image_dim == rank and qi.source_dim == rows
    np.testing.assert_array_equal(qi.pivots, image_pivots)
    y = gf2_matmul(random_matrix(37, rank, rng), image, rank, ncols)  # random vectors in the image
    x = qi.apply(y)
    assert x.shape == (37, words(rows))
    np.testing.assert_array_equal(gf2_matmul(x, a, rows, ncols), y)


def test_three_segments(rng: np.random.Generator) -> None:
    """[A | B | I]: rows with pivot in A give the quasi-inverse of A; the kernel of (A, B) lies in I."""
    rows, wa, wb = 150, 70, 90
    a, b = rank_deficient(rows, wa, 40, rng), random_matrix(rows, wb, rng)
    aug = Augmented(rows, [wa, wb, rows])
    aug.set_segment(0, a)
    aug.set_segment(1, b)
    aug.fill_identity(2)
    pivots = aug.row_reduce()
    qi = aug.quasi_inverse(pivots, 0, 2)
    y = gf2_matmul(random_matrix(20, qi.image_dim, rng), aug.image(pivots, 0, 1), qi.image_dim, wa)
    np.testing.assert_array_equal(gf2_matmul(qi.apply(y), a, rows, wa), y)
    kernel = aug.kernel(pivots, 2)
    assert not gf2_matmul(kernel.basis, a, rows, wa).any()
    assert not gf2_matmul(kernel.basis, b, rows, wb).any()
    both = np.zeros((rows, words(wa) + words(wb)), dtype=np.uint64)
    both[:, : words(wa)], both[:, words(wa) :] = a, b
    assert kernel.dim == rows - len(oracle_rref(both, 64 * words(wa) + wb)[1])


def test_segments_are_word_aligned() -> None:
    aug = Augmented(3, [5, 64, 65, 0, 2])
    assert aug.starts == [0, 1, 2, 4, 4, 5]
    assert [aug.segment_columns(s) for s in range(5)] == [(0, 5), (64, 128), (128, 193), (256, 256), (256, 258)]
    assert aug.ncols == 258 and aug.segment(2).shape == (3, 2)
    aug.fill_identity(4)
    assert to_bool(aug.segment(4).copy(), 2).tolist() == [[True, False], [False, True], [False, False]]


def test_quasi_inverse_ignores_non_pivot_columns(rng: np.random.Generator) -> None:
    pre = random_matrix(3, 10, rng)
    qi = QuasiInverse(np.array([1, 4, 6]), pre, 10)
    y = zeros(1, 8)
    y[0, 0] = np.uint64(0b1010010)  # columns 1, 4, 6
    np.testing.assert_array_equal(qi.apply(y), pre[0:1] ^ pre[1:2] ^ pre[2:3])
    y[0, 0] |= np.uint64(0b100001)  # non-pivot columns 0, 5 change nothing
    np.testing.assert_array_equal(qi.apply(y), pre[0:1] ^ pre[1:2] ^ pre[2:3])


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="segment 3 does not exist"):
        Augmented(2, [3, 4]).segment(3)
    with pytest.raises(ValueError, match="widths"):
        Augmented(2, [])
    with pytest.raises(ValueError, match="needs 2 words"):
        Augmented(2, [3, 100]).set_segment(1, zeros(2, 3))
    with pytest.raises(ValueError, match="do not fit"):
        Augmented(2, [3]).set_segment(0, zeros(3, 3))
    with pytest.raises(ValueError, match="pivots"):
        QuasiInverse(np.array([0]), zeros(2, 5), 5)
    with pytest.raises(ValueError, match="words"):
        QuasiInverse(np.array([0, 1]), zeros(2, 200), 5)
    with pytest.raises(ValueError, match="needs 2 words"):
        QuasiInverse(np.array([0, 100]), zeros(2, 5), 5).apply(zeros(1, 64))


@pytest.mark.parametrize("p", [2, 3])
def test_identity_is_the_identity_on_both_sides_of_the_kept_one(p: int) -> None:
    """F2's copy of a kept identity's corner (and the direct build past it), and F_p's, against 0/1 entries,
    and a fresh array each time (writing one must not change the next)."""
    from fp import field

    f = field(p)
    for n in (0, 1, 63, 64, 65, 200, 2048, 2049, 2100):
        eye = f.identity(n)
        assert eye.shape == f.zeros(n, n).shape and (f.to_ints(eye, n) == np.eye(n, dtype=np.uint8)).all()
        if n:
            eye[0, 0] = 0
            assert f.to_ints(f.identity(n), n)[0, 0] == 1


@pytest.mark.parametrize("rows,width", [(1, 1), (9, 40), (70, 130), (150, 300)])
def test_correct_is_apply_scatter_and_product(rows: int, width: int, rng: np.random.Generator) -> None:
    """QuasiInverse.correct (one compiled pass) against its twin, apply + scatter_columns + a product, on fresh random
    blocks inside wider matrices: rem's block part is cancelled when it lies in the block's image, and rem, y change
    exactly as the twin says either way (rem's block part random, not in the image, too)."""
    from fp.masked import any_in_columns, gather_columns, scatter_columns

    ncols = max(1, width // 3)
    cols = np.sort(rng.choice(width, size=ncols, replace=False)).astype(np.int64)
    src_dim = rows + int(rng.integers(0, 40))
    src_rows = np.sort(rng.choice(src_dim, size=rows, replace=False)).astype(np.int64)
    image = random_matrix(rows, width, rng)  # d on the block's rows, every column
    aug, pivots = reduced(gather_columns(image, cols), ncols)
    qi = aug.quasi_inverse(pivots, 0, 1)
    for in_image in (True, False):
        rem = random_matrix(5, width, rng)
        if in_image:  # its block part that of a combination of the block's rows, the rest random
            rem ^= scatter_columns(gather_columns(rem, cols), cols, width)
            rem ^= gf2_matmul(random_matrix(5, rows, rng), image, rows, width)
        y = random_matrix(5, src_dim, rng)
        want_rem, want_y = rem.copy(), y.copy()
        local = qi.apply(gather_columns(want_rem, cols))
        want_y ^= scatter_columns(local, src_rows, src_dim)
        want_rem ^= gf2_matmul(local, image, rows, width)
        assert any_in_columns(rem, cols) == bool(gather_columns(rem, cols).any())
        qi.correct(rem, cols, src_rows, image, y)
        np.testing.assert_array_equal(rem, want_rem)
        np.testing.assert_array_equal(y, want_y)
        if in_image:
            assert not any_in_columns(rem, cols)
    with pytest.raises(ValueError, match="do not fit"):
        qi.correct(rem, cols, src_rows[:-1], image, y)
    with pytest.raises(ValueError, match="mask values"):
        any_in_columns(rem, np.array([64 * rem.shape[1]]))
