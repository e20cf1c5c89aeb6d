"""Ext(M) as a module over Ext(k): products of M's classes by classes of the sphere (REFERENCE-PRODUCTS 2.1-2.2).

F resolves M, U resolves the unit k (the same object when M is k). Products by h_i are read off F's differentials
(filtration one, no lifting; `lifted=True` forces the lift, for tests). For M = k a product by any other b comes from
one chain map F -> F lifted from b, whose readout at x + b is b x for every x at once (the reference's lift_hom). For
any other M, each generator x of Ext(M) is lifted to a chain map F -> U (cached per generator, extended on demand)
and b x = sum_k b_k [f_x(e_i) : u_k] is read at x + b (the reference's ExtAlgebra). All maps a request needs are
lifted together, so they share the quasi-inverses of U.
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
from nassau.products.filtration_one import h_matrix


def is_unit_module(module: Module) -> bool:
    """Whether the module is k itself (one cell, in degree 0), so its resolution can serve as its own unit."""
    return module.min_degree == 0 and module.max_degree == 0 and module.dimension(0) == 1


def unit_module(module: Module) -> Module:
    """k over the algebra the module lives over (the sphere S_2 over A)."""
    profile = module.profile
    data = {"p": 2, "type": "finite dimensional module", "gens": {"x0": 0}, "actions": []}
    if not profile.is_full:
        data["profile"] = {"p_part": list(profile.p_part), "truncated": profile.truncated}
    name = "S_2" if profile.is_full else f"F2 over {profile.describe()}"
    return module_from_spec(ModuleSpec(name=name, shift=0, path=Path(f"<the unit over {profile.describe()}>"),
                                       data=data))


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

    def products(self, b: ExtClass, at: Iterable[BidegreeNS], lifted: bool = False) -> dict[BidegreeNS, np.ndarray]:
        """For each bidegree x of Ext(M) with x + b computed: the uint8 matrix whose row i is b x_i in the basis at
        x + b (shape dim(x) x dim(x + b))."""
        wanted = [x for x in at if self.computed(x[0] + b.n, x[1] + b.s) and self.computed(*x)]
        if b.h_index is not None and not lifted:
            return {(n, s): h_matrix(self.module, b.h_index, n, s) for n, s in wanted}
        if self.is_unit:
            f = self.class_map(b, [(n + b.n, s + b.s) for n, s in wanted])
            return {x: f.hom_k(x[1] + b.s, x[0] + x[1] + b.t) for x in wanted}
        maps = self._generator_maps_through(b, wanted)
        out = {}
        for n, s in wanted:
            rows = []
            for i in range(self.dim(self.module, n, s)):
                hom = maps[(n, s, i)].hom_k(s + b.s, n + s + b.t)  # (gens of U at b) x (gens of F at x + b)
                rows.append((b.array.astype(np.int64) @ hom.astype(np.int64)) % 2)
            out[(n, s)] = np.array(rows, dtype=np.uint8).reshape(len(rows), self.dim(self.module, n + b.n, s + b.s))
        return out

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
