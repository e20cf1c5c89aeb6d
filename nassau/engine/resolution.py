"""The state of a minimal resolution F_s -> F_{s-1} -> ... -> F_0 -> M, shared by every algorithm.

It holds the free modules, the differentials on generators, the augmentation, the kernels a later
step still needs, and how many generators each bidegree added (dim Ext^{s,t}). Steps read it and add
generators to it; the scheduler decides in which order. Everything is append-only, so a step may read
the generators of lower degree while other steps append generators of higher degree. Over the unstable
algebra (a module from algebra.unstable.module) the free modules are free unstable modules, nothing else
changes.

A resolution owns its preimages (`preimages`): every lift into it (chain maps, products, d2) goes through the one
object, by the method of the algorithm that made it (Nassau's signature blocks for Nassau's algorithm, the full
[d | I] otherwise), so quasi-inverses are shared by every lift and outputs that read them are the reference's.
"""
from __future__ import annotations

import threading

import numpy as np

from algebra.free.free_map import FreeMap
from algebra.free.free_module import FreeModule
from algebra.module.interface import Module
from algebra.unstable.basis import UnstableBasis
from algebra.unstable.free_module import UnstableFreeModule
from fp import Subspace, field
from nassau.engine.preimages import Preimages


class Resolution:
    def __init__(self, module: Module, algorithm: str = "standard") -> None:
        self.module = module
        #: The algorithm whose steps made it ("nassau", "standard", ...): it chooses how preimages are found.
        self.algorithm = algorithm
        self._preimages: Preimages | None = None
        self.algebra = module.algebra
        #: F2 (packed rows) or F_p (bytes): every matrix and vector of this resolution lives over it.
        self.field = field(module.algebra.prime)
        self.min_degree = module.min_degree
        self._lock = threading.Lock()
        self.modules: list[FreeModule] = []
        self.maps: list[FreeMap | None] = []
        #: epsilon(g) for the generators of F_0, each a 0/1 vector over M in degree deg(g).
        self.augmentation: list[np.ndarray] = []
        self.kernels: dict[tuple[int, int], Subspace] = {}
        #: (s, t) -> number of generators added there (dim Ext^{s,t}); present once (s, t) is done.
        self.new_gens: dict[tuple[int, int], int] = {}
        #: For a cofiber (nassau.engine.cofiber): the filtration s whose generators cover a given submodule N of
        #: F_{s-1} instead of ker d_{s-1}, and that N degree by degree.
        self.truncation = None

    @property
    def preimages(self) -> Preimages:
        """Preimages under this resolution's differentials, made on first use and kept: Nassau's method for a
        resolution made by Nassau's algorithm, the standard one for any other."""
        if self._preimages is None:
            with self._lock:
                if self._preimages is None:
                    self._preimages = Preimages(self, "nassau" if self.algorithm == "nassau" else "standard")
        return self._preimages

    @preimages.setter
    def preimages(self, preimages: Preimages) -> None:
        """Lift through these instead (the tests compare both methods on one resolution)."""
        self._preimages = preimages

    # -- structure ------------------------------------------------------------------------------------
    def free(self, s: int) -> FreeModule:
        if s < len(self.maps):  # appended only, under the lock, each map after its module: both there for good
            return self.modules[s]
        kind = UnstableFreeModule if isinstance(self.algebra, UnstableBasis) else FreeModule
        with self._lock:
            while len(self.modules) <= s:
                k = len(self.modules)
                self.modules.append(kind(self.algebra, name=f"F_{k}"))
                self.maps.append(None if k == 0 else FreeMap(self.modules[k], self.modules[k - 1]))
            return self.modules[s]

    def differential(self, s: int) -> FreeMap:
        self.free(s)
        d = self.maps[s]
        assert d is not None, "F_0 maps to the module, not to a free module"
        return d

    def is_done(self, s: int, t: int) -> bool:
        return (s, t) in self.new_gens

    # -- recording results ------------------------------------------------------------------------------
    def add_generators(self, s: int, t: int, outputs: np.ndarray, target_ngens: int | None = None) -> None:
        """Add the new generators of (s, t) with their images and mark (s, t) done.

        outputs: for s = 0 one 0/1 row over M_t per generator; for s > 0 packed rows over F_{s-1} in
        degree t, restricted to its first target_ngens generators.
        """
        fs = self.free(s)
        names = [f"x_({t - s},{s},{j})" for j in range(len(outputs))]
        if len(outputs):
            fs.add_generators(t, names)
            if s == 0:
                self.augmentation.extend(np.asarray(v, dtype=np.uint8) for v in outputs)
            else:
                self.differential(s).add_outputs(t, outputs, target_ngens)
        with self._lock:
            self.new_gens[(s, t)] = len(outputs)

    def set_kernel(self, s: int, t: int, kernel: Subspace) -> None:
        with self._lock:
            self.kernels[(s, t)] = kernel

    def take_kernel(self, s: int, t: int) -> Subspace | None:
        """Remove and return the cached kernel of (s, t), if any."""
        with self._lock:
            return self.kernels.pop((s, t), None)

    def dims(self) -> dict[tuple[int, int], int]:
        """dim Ext^{s,t} for every finished bidegree, keyed (s, t)."""
        with self._lock:
            return dict(self.new_gens)
