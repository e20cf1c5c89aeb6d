"""The obvious twin of the tensor product's action: the Cartan formula on one element at a time, in the basis order
REFERENCE-MODULES 3.2 writes down (degree split i ascending, then L_i's basis, then R_(n-i)'s).

P(R) (l (x) r) = sum over R' + R'' = R (componentwise) of P(R') l (x) P(R'') r, each factor acted on by its own
module; no Kronecker blocks, no tables of the product."""
from __future__ import annotations

import itertools

import numpy as np

from algebra.milnor.ppart import degree, trimmed
from algebra.module.interface import Module, act


def basis(left: Module, right: Module, n: int) -> list[tuple[int, int, int]]:
    """The basis of (L (x) R)_n as (i, a, b): e_a in L_i times e_b in R_(n-i), in the reference's order."""
    return [(i, a, b) for i in range(left.min_degree, n - right.min_degree + 1)
            for a in range(left.dimension(i)) for b in range(right.dimension(n - i))]


def names(left: Module, right: Module, n: int) -> list[str]:
    return [f"{left.basis_name(i, a)}.{right.basis_name(n - i, b)}" for i, a, b in basis(left, right, n)]


def cartan(left: Module, right: Module, r: tuple[int, ...], n: int, vector: np.ndarray) -> np.ndarray:
    """P(R) applied to a vector of (L (x) R)_n, by the Cartan formula term by term (p = 2)."""
    out_index = {key: j for j, key in enumerate(basis(left, right, n + degree(r)))}
    out = np.zeros(len(out_index), dtype=np.uint8)
    for (i, a, b), coefficient in zip(basis(left, right, n), vector, strict=True):
        if not coefficient % 2:
            continue
        for r1 in itertools.product(*(range(x + 1) for x in r)):
            r2 = tuple(x - y for x, y in zip(r, r1, strict=True))
            e_a = np.eye(left.dimension(i), dtype=np.uint8)[a]
            e_b = np.eye(right.dimension(n - i), dtype=np.uint8)[b]
            lv, rv = act(left, trimmed(r1), i, e_a), act(right, trimmed(r2), n - i, e_b)
            for a2 in np.nonzero(lv)[0]:
                for b2 in np.nonzero(rv)[0]:
                    out[out_index[(i + degree(r1), int(a2), int(b2))]] ^= 1
    return out

