"""Tensor products L (x) R over A with the Cartan formula (REFERENCE-MODULES 3.2).

In degree n the basis runs over the split i = min L .. n - min R, then L_i's basis, then R_{n-i}'s (the
reference's order, a wire format); names are `l.r`. P(R) acts on l (x) r by the Milnor coproduct
sum over R' + R'' = R of P(R') l (x) P(R'') r, so a table is assembled from the two factors' tables, one
block of Kronecker products per (split degree, degree of R'). Either factor may be infinite.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import trimmed
from algebra.module.interface import LazyTables, Module
from algebra.module.spec import ModuleError


class TensorModule:
    def __init__(self, left: Module, right: Module, name: str) -> None:
        if left.algebra.prime != 2:
            raise ModuleError(f"cannot tensor {left.name} with {right.name}: tensor products need the Milnor "
                              f"coproduct, implemented at p = 2 only (as in the reference)")
        if left.profile != right.profile:
            raise ModuleError(f"cannot tensor {left.name} (over {left.profile.describe()}) with {right.name} "
                              f"(over {right.profile.describe()}): they must live over the same algebra")
        self.left, self.right = left, right
        self.name = name
        self.profile = left.profile
        self.algebra = MilnorBasis(self.profile)
        self.source = f"{left.source} (x) {right.source}"
        self._lock = threading.Lock()
        self.action_table = LazyTables(self._table, self.dimension)
        self._splits: dict[int, dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}

    @property
    def min_degree(self) -> int:
        return self.left.min_degree + self.right.min_degree

    @property
    def max_degree(self) -> int | None:
        if self.left.max_degree is None or self.right.max_degree is None:
            return None
        return self.left.max_degree + self.right.max_degree

    def _parts(self, n: int) -> list[tuple[int, int, int, int]]:
        """(i, dim L_i, dim R_{n-i}, offset) for every split of degree n with both sides nonzero."""
        parts, offset = [], 0
        top = n - self.right.min_degree
        if self.left.max_degree is not None:
            top = min(top, self.left.max_degree)
        for i in range(self.left.min_degree, top + 1):
            dl, dr = self.left.dimension(i), self.right.dimension(n - i)
            if dl and dr:
                parts.append((i, dl, dr, offset))
                offset += dl * dr
        return parts

    def dimension(self, n: int) -> int:
        return sum(dl * dr for _, dl, dr, _ in self._parts(n))

    def basis_name(self, n: int, k: int) -> str:
        for i, dl, dr, offset in self._parts(n):
            if k < offset + dl * dr:
                a, b = divmod(k - offset, dr)
                return f"{self.left.basis_name(i, a)}.{self.right.basis_name(n - i, b)}"
        raise IndexError(f"{self.name} has no basis element {k} in degree {n}")

    def _coproduct(self, e: int) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """For each degree e1: the triples (index of P(R) in A_e, of P(R') in A_e1, of P(R'') in A_{e-e1})."""
        with self._lock:
            found = self._splits.get(e)
        if found is not None:
            return found
        alg = self.algebra
        triples: dict[int, list[tuple[int, int, int]]] = {}
        for k in range(alg.dimension(e)):
            r = alg.element(e, k)
            for r1 in itertools.product(*(range(x + 1) for x in r)):
                r2 = tuple(x - y for x, y in zip(r, r1, strict=True))
                e1 = e - sum(x * ((2 << i) - 1) for i, x in enumerate(r2))
                triples.setdefault(e1, []).append((k, alg.index(trimmed(r1)), alg.index(trimmed(r2))))
        found = {e1: tuple(np.array(col, dtype=np.int64) for col in zip(*ts, strict=True)) for e1, ts in triples.items()}
        with self._lock:
            return self._splits.setdefault(e, found)

    def _table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        n_out = in_deg + op_deg
        din, dout = self.dimension(in_deg), self.dimension(n_out)
        if not (din and dout):
            return None
        table = np.zeros((self.algebra.dimension(op_deg), din, dout), dtype=np.uint8)
        targets = {i: offset for i, _, _, offset in self._parts(n_out)}
        for i, dl, dr, offset in self._parts(in_deg):
            for e1, (ks, k1, k2) in self._coproduct(op_deg).items():
                tl = self.left.action_table(e1, i)
                tr = self.right.action_table(op_deg - e1, in_deg - i)
                if i + e1 not in targets or tl is None or tr is None:
                    continue
                out_offset = targets[i + e1]
                block = np.einsum("kab,kcd->kacbd", tl[k1], tr[k2]).reshape(len(ks), dl * dr, -1)
                np.add.at(table[:, offset:offset + dl * dr, out_offset:out_offset + block.shape[2]], ks, block)
        return table % 2
