"""fp.left_kernel (the kernel from A's transpose) against its obvious twin, reducing [A | I] (reduce_with_identity):
the same RREF basis and pivots, bit for bit, on fresh random matrices of every shape, low rank included."""
from __future__ import annotations

import numpy as np

from fp import field, random_matrix, reduce_with_identity
from fp.left_kernel import left_kernel


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
