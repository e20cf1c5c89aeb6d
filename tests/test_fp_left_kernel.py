"""fp.left_kernel (the kernel from A's transpose) against its obvious twin, reducing [A | I] (reduce_with_identity):
the same RREF basis and pivots, bit for bit, on fresh random matrices of every shape, low rank included."""
from __future__ import annotations

import numpy as np
import pytest

import fp.left_kernel as lk
from fp import field, random_matrix, reduce_with_identity, row_reduce, words
from fp.left_kernel import left_kernel, triangular_split


def twin(rows: np.ndarray, columns: np.ndarray, order: np.ndarray):
    f = field(2)
    return reduce_with_identity(f.gather(rows[order], columns), len(columns), f)[1]


def random_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, ncols = int(rng.integers(0, 160)), int(rng.integers(0, 200))
    rows = random_matrix(n, ncols, rng)
    kind = int(rng.integers(3))
    if kind == 1 and n > 1:  # rank below the rows: half of them repeated
        rows[n // 2:] = rows[: n - n // 2]
    elif kind == 2:  # sparse, as a differential's rows are
        rows &= random_matrix(n, ncols, rng) & random_matrix(n, ncols, rng)
    columns = rng.permutation(ncols)[: int(rng.integers(0, ncols + 1))]
    return rows, columns, rng.permutation(n)


def test_left_kernel_matches_reducing_with_the_identity(rng: np.random.Generator) -> None:
    for _ in range(200):
        rows, columns, order = random_case(rng)
        got, want = left_kernel(rows, columns, order), twin(rows, columns, order)
        assert np.array_equal(got.pivots, want.pivots)
        assert np.array_equal(got.basis, want.basis)


def test_left_kernel_without_columns_is_every_row() -> None:
    rng = np.random.default_rng(0)
    rows, order = random_matrix(70, 30, rng), rng.permutation(70)
    got = left_kernel(rows, np.zeros(0, dtype=np.int64), order)
    assert got.pivots.tolist() == list(range(70))
    assert np.array_equal(got.basis, field(2).identity(70))


@pytest.mark.parametrize("small", [0, 1 << 40], ids=["blocks", "bits"])
def test_triangular_split_against_its_twins(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch,
                                            small: int) -> None:
    """fp.left_kernel.triangular_split on A = some rows and columns of a random matrix: its rows are where
    left_kernel (rows in their order) has no pivot, its dependent columns are the non-pivot columns of A's RREF
    (fp.row_reduce), and its solver inverts A on those rows and the other columns (z L A[Q] = z there, L zero on the
    dependent columns), on fresh random matrices; with its transposes made 64 x 64 bits at a time and by the walk
    over the set bits (SMALL_BLOCK), the two giving the same [A^T | I] and solver bit for bit."""
    monkeypatch.setattr(lk, "SMALL_BLOCK", small)
    f = field(2)
    for _ in range(200):
        rows, columns, _ = random_case(rng)
        picked = np.sort(rng.permutation(rows.shape[0])[: int(rng.integers(0, rows.shape[0] + 1))])
        independent, dependent, solver = triangular_split(rows, picked, columns)
        aug = lk._transposed_with_identity(rows, picked, columns)
        assert np.array_equal(aug, lk._transposed_with_identity_bits(rows, picked, np.asarray(columns, np.int64)))
        rank = len(independent)
        if rank:
            assert np.array_equal(lk._solver(aug, rank, words(len(picked)), len(columns)),
                                  lk._solver_bits(aug, rank, words(len(picked)), len(columns)))
        a, n, ncols = f.gather(rows[picked], columns), len(picked), len(columns)
        kernel = left_kernel(a, np.arange(ncols), np.arange(n))
        assert independent.tolist() == sorted(set(range(n)) - set(kernel.pivots.tolist()))
        column_pivots = row_reduce(a.copy(), ncols) if n and ncols else np.zeros(0, dtype=np.int64)
        assert dependent.tolist() == sorted(set(range(ncols)) - set(column_pivots.tolist()))
        assert solver.shape == (ncols, words(len(independent)))
        assert not solver[dependent].any()
        z = random_matrix(5, ncols, rng)
        back = f.matmul(f.matmul(z, solver, ncols, len(independent)), a[independent], len(independent), ncols)
        assert np.array_equal(f.gather(back, column_pivots), f.gather(z, column_pivots))
