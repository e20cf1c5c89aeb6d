"""The one interface every module kind offers the engine (DESIGN 6a).

Finite-dimensional, finitely presented, projective-space and tensor-product modules all look alike to
the resolution, the products and the charts: a bounded-below graded F2 vector space, computed lazily
degree by degree, with the action of every Milnor basis element as a matrix. Nothing downstream asks
which kind it holds.
"""
from __future__ import annotations

import threading
from typing import Callable, Protocol

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.profile import Profile


class Module(Protocol):
    name: str
    #: The algebra the module lives over (A or a profile subalgebra) and its Milnor basis tables.
    profile: Profile
    algebra: MilnorBasis
    #: Where the definition came from, for error messages.
    source: str

    @property
    def min_degree(self) -> int: ...

    @property
    def max_degree(self) -> int | None:
        """The top nonzero degree, or None for an infinite module."""

    def dimension(self, d: int) -> int: ...

    def basis_name(self, d: int, i: int) -> str: ...

    def action_table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        """uint8 array (dim A_op, dim M_in, dim M_out): entry [a, i, o] is the coefficient of basis
        element o in P_a x_i. None when the table is zero; op_deg 0 gives the identity."""


def act(module: Module, r: object, in_deg: int, vector: np.ndarray) -> np.ndarray:
    """An algebra basis element applied to a vector (entries mod p) in degree in_deg (a slow, obvious path for
    tests and small data)."""
    d = module.algebra.degree(r)
    out_dim = module.dimension(in_deg + d)
    table = module.action_table(d, in_deg)
    if table is None:
        return np.zeros(out_dim, dtype=np.uint8)
    index = module.algebra.index(r) if d else 0
    p = module.algebra.prime
    return ((np.asarray(vector, dtype=np.int64) @ table[index].astype(np.int64)) % p).astype(np.uint8)


def identity_table(dim: int) -> np.ndarray:
    return np.eye(dim, dtype=np.uint8)[None]


class LazyTables:
    """A module's action_table for kinds that compute tables on demand: the unit acts as the identity, each
    (op degree, input degree) is computed once (thread-safe) and a zero table is kept as None."""

    def __init__(self, compute: Callable[[int, int], np.ndarray | None], dimension: Callable[[int], int]) -> None:
        self._compute, self._dimension = compute, dimension
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, int], np.ndarray | None] = {}

    def __call__(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        if op_deg == 0:
            return identity_table(self._dimension(in_deg))
        key = (op_deg, in_deg)
        with self._lock:
            if key in self._tables:
                return self._tables[key]
        table = self._compute(op_deg, in_deg)
        if table is not None and not table.any():
            table = None
        with self._lock:
            return self._tables.setdefault(key, table)
