"""Ext(M) as a module over Ext(k): products of M's classes by classes of the sphere (REFERENCE-PRODUCTS 2.1-2.2).

F resolves M, U resolves the unit k (the same object when M is k), over F_2 or F_p. The product of x in Ext(M) by b
is the reference's ExtAlgebra's: x is lifted to a chain map f_x: F -> U (cached per generator, extended on demand)
and x b = sum_k b_k [f_x(e_i) : u_k] is read at x + b. Products by filtration-one classes (h_i; a_0, h_0 at odd p)
are read off F's differentials instead (no lifting; `lifted=True` forces the lift, for tests): the coefficient of
op x_j in d(y_k) is the same number. For M = k one chain map F -> F lifted from b serves every x at once (the
reference's lift_hom); it reads b x, which at odd p is (-1)^{s_x s_b + t_x t_b} x b (graded commutativity), so its
readout is multiplied by that sign: every route gives x b. All maps a request needs are lifted together, so they
share the quasi-inverses of U.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from algebra.module.interface import Module
from algebra.module.loader import module_from_spec
from algebra.module.spec import ModuleSpec
from charts.model import BidegreeNS
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_class import ExtClass
from nassau.products.filtration_one import h_matrix, operation_of


def is_unit_module(module: Module) -> bool:
    """Whether the module is k itself (one cell, in degree 0), so its resolution can serve as its own unit."""
    return module.min_degree == 0 and module.max_degree == 0 and module.dimension(0) == 1


def unit_module(module: Module) -> Module:
    """k over the algebra the module lives over (the sphere S_2 over A)."""
    profile, p = module.profile, module.algebra.prime
    data = {"p": p, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": []}
    if not profile.is_full:
        data["profile"] = {"p_part": list(profile.p_part), "truncated": profile.truncated}
        if p != 2:
            data["profile"]["q_part"] = profile.q_part
    name = f"S_{p}" if profile.is_full else f"F{p} over {profile.describe()}"
    return module_from_spec(ModuleSpec(name=name, shift=0, path=Path(f"<the unit over {profile.describe()}>"),
                                       data=data))


def commutation_sign(p: int, x: tuple[int, int], y: tuple[int, int]) -> int:
    """y x = sign x y for x, y in Ext^{s,t} (as (s, t)): (-1)^{s_x s_y + t_x t_y}, written as an element of F_p (1
    at p = 2)."""
    return p - 1 if (x[0] * y[0] + x[1] * y[1]) % 2 else 1


class ExtAlgebra:
    def __init__(self, module: Resolution, unit: Resolution, threads: int = 1) -> None:
        self.module = module
        self.unit = unit
        self.is_unit = module is unit
        self.threads = threads
        self._class_maps: dict[ExtClass, ChainMap] = {}
        self._generator_maps: dict[tuple[int, int, int], ChainMap] = {}
        self._unit_algebra: ExtAlgebra | None = None

    def dim(self, res: Resolution, n: int, s: int) -> int:
        return res.new_gens.get((s, n + s), 0)

    def computed(self, n: int, s: int) -> bool:
        """Whether F reached (n, s) (or (n, s) lies below its bottom, where Ext is zero)."""
        return self.module.is_done(s, n + s) or n < self.module.min_degree

    @property
    def p(self) -> int:
        return self.module.field.p

    def products(self, b: ExtClass, at: Iterable[BidegreeNS], lifted: bool = False,
                 route: str = "auto") -> dict[BidegreeNS, np.ndarray]:
        """For each bidegree x of Ext(M) with x + b computed: the uint8 matrix whose row i is x_i b in the basis at
        x + b (shape dim(x) x dim(x + b)). `route` "generators" forces one lifted map per x_i even for M = k (the
        twin of the one-map route, for tests)."""
        wanted = [x for x in at if self.computed(x[0] + b.n, x[1] + b.s) and self.computed(*x)]
        op = operation_of(self.module, b.n, b.s, b.vector)
        if op is not None and not lifted:
            return {(n, s): self.scaled(h_matrix(self.module, op, n, s), b.vector[0]) for n, s in wanted}
        if self.is_unit and route == "auto":
            f = self.class_map(b, [(n + b.n, s + b.s) for n, s in wanted])
            return {(n, s): self.scaled(f.hom_k(s + b.s, n + s + b.t), commutation_sign(self.p, (s, n + s), (b.s, b.t)))
                    for n, s in wanted}
        maps = self._generator_maps_through(b, wanted)
        out = {}
        for n, s in wanted:
            rows = []
            for i in range(self.dim(self.module, n, s)):
                hom = maps[(n, s, i)].hom_k(s + b.s, n + s + b.t)  # (gens of U at b) x (gens of F at x + b)
                rows.append((b.array.astype(np.int64) @ hom.astype(np.int64)) % self.p)
            out[(n, s)] = np.array(rows, dtype=np.uint8).reshape(len(rows), self.dim(self.module, n + b.n, s + b.s))
        return out

    def scaled(self, matrix: np.ndarray, c: int) -> np.ndarray:
        """c times a uint8 matrix over F_p."""
        return matrix if c == 1 else ((matrix.astype(np.int64) * c) % self.p).astype(np.uint8)

    @property
    def unit_algebra(self) -> ExtAlgebra:
        """Ext(k) over itself, on the unit's resolution (this algebra when M is k)."""
        if self.is_unit:
            return self
        if self._unit_algebra is None:
            self._unit_algebra = ExtAlgebra(self.unit, self.unit, threads=self.threads)
        return self._unit_algebra

    def class_map(self, b: ExtClass, inputs: list[BidegreeNS]) -> ChainMap:
        """The chain map F -> F lifted from b (M = k only), extended over the given input bidegrees (n, s)."""
        assert self.is_unit, "a class of Ext(k) lifts to a self-map of the unit's resolution only"
        region = Region.through(inputs, self.module.min_degree)
        f = self._class_maps.get(b)
        if f is None:
            f = ChainMap.from_class(self.module, self.unit, b.n, b.s, b.array, region, f"{b}")
            self._class_maps[b] = f
        else:
            f.region = f.region.union(region)
        lift([f], self.threads)
        return f

    def _generator_maps_through(self, b: ExtClass, wanted: list[BidegreeNS]) -> dict[tuple[int, int, int], ChainMap]:
        """Chain maps F -> U of every generator at the wanted bidegrees, lifted through x + b."""
        todo = []
        out = {}
        for n, s in wanted:
            region = Region.through([(n + b.n, s + b.s)], self.module.min_degree)
            for i in range(self.dim(self.module, n, s)):
                key = (n, s, i)
                f = self._generator_maps.get(key)
                if f is None:
                    unit_vector = np.zeros(self.dim(self.module, n, s), dtype=np.uint8)
                    unit_vector[i] = 1
                    f = ChainMap.from_class(self.module, self.unit, n, s, unit_vector, region, f"x_({n},{s},{i})")
                    self._generator_maps[key] = f
                else:
                    f.region = f.region.union(region)
                todo.append(f)
                out[key] = f
        lift(todo, self.threads)
        return out
