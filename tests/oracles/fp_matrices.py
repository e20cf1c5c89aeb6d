"""Inputs and oracles for the fp tests and benchmark: rank-deficient and sparse matrices, galois RREF.

Kept in the package (not in tests/) so the tests and benchmarks/bench_fp.py share one definition.
"""
from __future__ import annotations

import numpy as np

from fp.packed import from_bool, random_matrix, to_bool


def rank_deficient(rows: int, ncols: int, rank: int, rng: np.random.Generator) -> np.ndarray:
    """A packed rows x ncols matrix of rank <= `rank`: the product of random rows x rank and rank x ncols."""
    left = to_bool(random_matrix(rows, rank, rng), rank).astype(np.float32)
    right = to_bool(random_matrix(rank, ncols, rng), ncols).astype(np.float32)
    return from_bool((left @ right).astype(np.int64) & 1)  # float32 BLAS is exact for sums below 2^24


def sparse_matrix(rows: int, ncols: int, density: float, rng: np.random.Generator) -> np.ndarray:
    """A packed matrix whose entries are 1 with probability `density` (many empty columns, long scans)."""
    return from_bool(rng.random((rows, ncols)) < density)


def oracle_rref(a: np.ndarray, ncols: int) -> tuple[np.ndarray, np.ndarray]:
    """RREF (bool rows x ncols) and pivot columns of a packed matrix, computed by galois (the oracle)."""
    import galois

    bits = to_bool(a, ncols)
    if bits.size == 0:
        return bits, np.zeros(0, dtype=np.int64)
    rref = np.asarray(galois.GF(2)(bits.astype(np.uint8)).row_reduce()).astype(bool)
    nonzero = rref.any(axis=1)
    pivots = np.argmax(rref[nonzero], axis=1).astype(np.int64)
    return rref, pivots
