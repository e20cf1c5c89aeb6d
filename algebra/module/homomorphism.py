"""A homomorphism of A-modules phi: M -> N raising degrees by D, as users give it, and the check that it is A-linear.

Given as images of M's basis elements by name (`x0=x4`, `a=b+c`, `y=0`); unnamed elements go to 0. It is A-linear
when phi(a m) = a phi(m) for every Milnor basis element a and basis element m, which is checked on the action
tables of both modules (through a degree for infinite ones). Only then does it lift to a chain map
(nassau.lifting.chain_map.ChainMap.from_module_map), whose induced map on Ext is the reference's lift_hom between
modules.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.basis import format_element
from algebra.module.interface import Module


class ModuleMapError(ValueError):
    """The map is malformed or not A-linear; the message names the element or relation."""


class ModuleMap:
    def __init__(self, source: Module, target: Module, degree: int, images: dict[tuple[int, int], np.ndarray]) -> None:
        self.source = source
        self.target = target
        self.degree = degree
        #: (degree d, index i) of a basis element of M -> uint8 vector over N_{d + degree}.
        self.images = images

    def matrix(self, t: int) -> np.ndarray:
        """uint8 (dim M_t x dim N_{t + D}): row i is phi of the i-th basis element of M_t."""
        out = np.zeros((self.source.dimension(t), self.target.dimension(t + self.degree)), dtype=np.uint8)
        for (d, i), v in self.images.items():
            if d == t:
                out[i] = v
        return out

    def check_linear(self, through: int) -> None:
        """Raise ModuleMapError unless phi(a m) = a phi(m) for all a and m (degrees of M and N up to `through` and
        through + D for infinite modules)."""
        m, n = self.source, self.target
        if m.profile != n.profile:
            raise ModuleMapError(f"{m.name} and {n.name} are modules over different algebras "
                                 f"({m.profile.describe()} and {n.profile.describe()})")
        top_m = through if m.max_degree is None else min(through, m.max_degree)
        top_n = through + self.degree if n.max_degree is None else n.max_degree
        for d in range(m.min_degree, top_m + 1):
            if m.dimension(d) == 0:
                continue
            phi_d = self.matrix(d).astype(np.int64)
            for e in range(1, max(top_m - d, top_n - d - self.degree) + 1):
                phi_out = self.matrix(d + e).astype(np.int64)
                t_m = m.action_table(e, d)
                t_n = n.action_table(e, d + self.degree)
                shape = (m.algebra.dimension(e), m.dimension(d), n.dimension(d + e + self.degree))
                left = np.zeros(shape, dtype=np.int64) if t_m is None else (t_m.astype(np.int64) @ phi_out) % 2
                right = np.zeros(shape, dtype=np.int64) if t_n is None else (phi_d @ t_n.astype(np.int64)) % 2
                bad = np.argwhere(left != right)
                if len(bad):
                    a, i, _ = (int(x) for x in bad[0])
                    op = format_element(m.algebra.element(e, a))
                    x = m.basis_name(d, i)
                    raise ModuleMapError(
                        f"the map {m.name} -> {n.name} is not A-linear: phi({op} {x}) = "
                        f"{_element(n, d + e + self.degree, left[a, i])} but {op} phi({x}) = "
                        f"{_element(n, d + e + self.degree, right[a, i])}")


def _element(module: Module, d: int, v: np.ndarray) -> str:
    terms = [module.basis_name(d, int(k)) for k in np.nonzero(v)[0]]
    return " + ".join(terms) if terms else "0"


def _names(module: Module, lo: int, hi: int) -> dict[str, tuple[int, int]]:
    out = {}
    for d in range(lo, hi + 1):
        for i in range(module.dimension(d)):
            out[module.basis_name(d, i)] = (d, i)
    return out


def parse_module_map(source: Module, target: Module, degree: int, sends: list[str], through: int) -> ModuleMap:
    """`NAME=NAME[+NAME...]` or `NAME=0` for basis elements of degree <= through (the top of a finite module)."""
    top_m = through if source.max_degree is None else source.max_degree
    top_n = top_m + degree if target.max_degree is None else target.max_degree
    src_names = _names(source, source.min_degree, top_m)
    tgt_names = _names(target, target.min_degree, top_n)
    images: dict[tuple[int, int], np.ndarray] = {}
    for send in sends:
        if "=" not in send:
            raise ModuleMapError(f"cannot read {send!r}: expected NAME=IMAGE such as x0=x4")
        left, right = (x.strip() for x in send.split("=", 1))
        if left not in src_names:
            raise ModuleMapError(f"{source.name} has no basis element {left!r}")
        d, i = src_names[left]
        if (d, i) in images:
            raise ModuleMapError(f"{left} is sent twice")
        v = np.zeros(target.dimension(d + degree), dtype=np.uint8)
        if right != "0":
            for term in (x.strip() for x in right.split("+")):
                if term not in tgt_names:
                    raise ModuleMapError(f"{target.name} has no basis element {term!r}")
                e, j = tgt_names[term]
                if e != d + degree:
                    raise ModuleMapError(f"{left} (degree {d}) must go to degree {d + degree}, but {term} has "
                                         f"degree {e}")
                v[j] ^= 1
        images[(d, i)] = v
    return ModuleMap(source, target, degree, images)
