"""Subspace: RREF basis, batched reduce, contains and add_rows against galois ranks and row reduction."""
from __future__ import annotations

import numpy as np
import pytest

from fp.matmul import gf2_matmul
from fp.packed import random_matrix, to_bool, zeros
from fp.subspace import Subspace
from tests.oracles.fp_matrices import oracle_rref, rank_deficient


def rank(a: np.ndarray, ncols: int) -> int:
    return len(oracle_rref(a, ncols)[1])


@pytest.mark.parametrize("ncols,dim,batches", [(1, 1, 1), (70, 30, 3), (300, 120, 5), (1000, 200, 7)])
def test_add_rows_keeps_rref(ncols: int, dim: int, batches: int, rng: np.random.Generator) -> None:
    gens = rank_deficient(dim + 20, ncols, dim, rng)
    space = Subspace(ncols)
    added = sum(space.add_rows(chunk.copy()) for chunk in np.array_split(gens, batches))
    expected, pivots = oracle_rref(gens, ncols)
    assert added == space.dim == len(pivots)
    np.testing.assert_array_equal(space.pivots, pivots)
    np.testing.assert_array_equal(to_bool(space.basis, ncols), expected[: len(pivots)])
    assert space.add_rows(gens[:5].copy()) == 0


def test_reduce_and_contains(rng: np.random.Generator) -> None:
    ncols = 500
    space = Subspace(ncols)
    space.add_rows(random_matrix(150, ncols, rng))
    inside = gf2_matmul(random_matrix(40, space.dim, rng), space.basis, space.dim, ncols)
    outside = random_matrix(40, ncols, rng)
    assert all(space.contains(v) for v in inside)
    assert not space.reduce(inside.copy()).any()
    assert np.all(space.contains_rows(inside))
    reduced = space.reduce(outside.copy())
    assert not to_bool(reduced, ncols)[:, space.pivots].any()
    for v, r in zip(outside, reduced):
        # v - r lies in the space, and v lies in it iff r == 0
        assert space.contains(v ^ r)
        stacked = np.vstack([space.basis, v[None, :]])
        assert (rank(stacked, ncols) == space.dim) == (not r.any()) == space.contains(v)


def test_reduce_is_canonical(rng: np.random.Generator) -> None:
    ncols = 300
    space = Subspace(ncols)
    space.add_rows(random_matrix(100, ncols, rng))
    v = random_matrix(1, ncols, rng)
    shifted = v ^ gf2_matmul(random_matrix(1, space.dim, rng), space.basis, space.dim, ncols)
    np.testing.assert_array_equal(space.reduce(v.copy()), space.reduce(shifted))


def test_empty_and_full() -> None:
    space = Subspace(130)
    assert space.dim == 0 and space.contains(zeros(1, 130)[0])  # the zero vector
    v = np.zeros((1, 3), dtype=np.uint64)
    v[0, 2] = 1
    assert not space.contains(v)
    eye = np.zeros((130, 3), dtype=np.uint64)
    for i in range(130):
        eye[i, i // 64] |= np.uint64(1) << np.uint64(i % 64)
    assert space.add_rows(eye) == 130 and space.contains(v)


def test_from_rref_is_not_modified_by_add_rows(rng: np.random.Generator) -> None:
    a = random_matrix(20, 100, rng)
    base = Subspace(100)
    base.add_rows(a)
    basis = base.basis.copy()
    wrapped = Subspace.from_rref(basis, base.pivots, 100)
    wrapped.add_rows(random_matrix(30, 100, rng))
    np.testing.assert_array_equal(basis, base.basis)


def test_bad_input_raises() -> None:
    space = Subspace(100)
    with pytest.raises(ValueError, match="words"):
        space.add_rows(zeros(3, 300))
    with pytest.raises(ValueError, match="dtype"):
        space.reduce(np.zeros((3, 2), dtype=np.int32))
    with pytest.raises(ValueError, match="one vector"):
        space.contains(zeros(2, 100))
    with pytest.raises(ValueError, match="pivots"):
        Subspace.from_rref(zeros(3, 100), np.array([1, 2]), 100)
    with pytest.raises(ValueError, match=">= 0"):
        Subspace(-1)
