"""A module seen over the unstable algebra: the same module with its action tables in the excess order.

An unstable resolution (REFERENCE-UNSTABLE 1.2) resolves M by free unstable modules, which is only right when M
itself is unstable: every element x is killed by the operations of excess > |x| (Sq^i x = 0 for i > |x|). The
reference does not check this; `check_unstable` does, degree by degree up to where a run reaches, and names the
first operation that breaks it.
"""
from __future__ import annotations

import numpy as np

from algebra.module.interface import LazyTables, Module
from algebra.module.spec import ModuleError
from algebra.unstable.basis import UnstableBasis


class UnstableModule:
    """`inner` over UnstableBasis(inner.algebra): tables are the inner module's with their rows permuted."""

    def __init__(self, inner: Module) -> None:
        if getattr(inner, "cofiber", None) is not None:
            raise ModuleError(f"{inner.name}: a cofiber has no unstable resolution (the reference does not support "
                              "one either)")
        self.inner = inner
        self.name = inner.name
        self.source = inner.source
        self.profile = inner.profile
        self.algebra = UnstableBasis(inner.algebra)
        self.action_table = LazyTables(self._table, inner.dimension)

    @property
    def min_degree(self) -> int:
        return self.inner.min_degree

    @property
    def max_degree(self) -> int | None:
        return self.inner.max_degree

    def dimension(self, d: int) -> int:
        return self.inner.dimension(d)

    def basis_name(self, d: int, i: int) -> str:
        return self.inner.basis_name(d, i)

    def _table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        table = self.inner.action_table(op_deg, in_deg)
        return None if table is None else table[self.algebra.order(op_deg)]


def check_unstable(module: UnstableModule, max_degree: int) -> None:
    """ModuleError unless every element of degree d <= max_degree is killed by the operations of excess > d."""
    alg, top = module.algebra, module.max_degree
    last = max_degree if top is None else min(max_degree, top)
    for d in range(module.min_degree, last + 1):
        dim = module.dimension(d)
        if not dim:
            continue
        if d < 0:
            raise ModuleError(f"{module.name} is not an unstable module: {module.basis_name(d, 0)} has negative "
                              f"degree {d} (an unstable module is zero below degree 0; suspend it)")
        for e in range(1, last - d + 1):
            table = module.action_table(e, d)
            keep = alg.unstable_dimension(e, d)
            if table is None or not table[keep:].any():
                continue
            a, i = (int(k) for k in np.argwhere(table[keep:].any(axis=2))[0])
            op = alg.format(alg.element(e, keep + a))
            raise ModuleError(f"{module.name} is not an unstable module: {op} {module.basis_name(d, i)} is nonzero "
                              f"but {op} has excess {alg.excess(e, keep + a)} > {d}, the degree of "
                              f"{module.basis_name(d, i)} (suspend it for an unstable resolution)")
