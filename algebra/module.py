"""The one interface every module kind offers the engine (DESIGN 6a).

Finite-dimensional, finitely presented, projective-space and tensor-product modules all look alike to
the resolution, the products and the charts: a bounded-below graded F2 vector space, computed lazily
degree by degree, with the action of every Milnor basis element as a matrix. Nothing downstream asks
which kind it holds.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from algebra.milnor_basis import MilnorBasis
from algebra.profile import Profile


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


def act(module: Module, r: tuple[int, ...], in_deg: int, vector: np.ndarray) -> np.ndarray:
    """P(R) applied to a 0/1 vector in degree in_deg (a slow, obvious path for tests and small data)."""
    from algebra.ppart import degree

    d = degree(r)
    out_dim = module.dimension(in_deg + d)
    table = module.action_table(d, in_deg)
    if table is None:
        return np.zeros(out_dim, dtype=np.uint8)
    index = module.algebra.index(r) if d else 0
    return ((np.asarray(vector, dtype=np.int64) @ table[index].astype(np.int64)) % 2).astype(np.uint8)


def identity_table(dim: int) -> np.ndarray:
    return np.eye(dim, dtype=np.uint8)[None]
