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
from dataclasses import dataclass

import numpy as np

from algebra.free.free_map import FreeMap
from algebra.free.free_module import FreeModule
from algebra.module.interface import Module
from algebra.unstable.basis import UnstableBasis
from algebra.unstable.free_module import UnstableFreeModule
from fp import Subspace, field
from nassau.engine.preimages import Preimages


@dataclass(frozen=True)
class Added:
    """What one bidegree (s, t) added to a resolution, as another copy of it adds the same: the rows of the new
    generators' images (packed over F_{s-1}(t)'s first target_ngens generators, ncols columns, in the field's
    storage; at s = 0 their augmentations over M_t) and how many there are. The save directory writes this, a worker
    process sends it."""

    s: int
    t: int
    count: int
    ncols: int
    target_ngens: int
    rows: np.ndarray


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

    def added(self, s: int, t: int) -> Added:
        """What (s, t) added (it must be done)."""
        fs = self.free(s)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        if s == 0:
            ncols = self.module.dimension(t)
            eps = np.array(self.augmentation[first:last], dtype=np.int64).reshape(last - first, ncols)
            return Added(0, t, last - first, ncols, 0, self.field.from_ints(eps))
        d = self.differential(s)
        outs = [d.output(g) for g in range(first, last)]
        ngens = outs[0][1] if outs else 0
        ncols = self.free(s - 1).dimension(t, ngens) if outs else 0
        rows = np.array([v for v, _ in outs], dtype=self.field.dtype).reshape(len(outs), self.field.storage(ncols))
        return Added(s, t, last - first, ncols, ngens, rows)

    def fits(self, added: Added) -> bool:
        """Whether the generators below that its images name are here already."""
        return added.s == 0 or added.target_ngens <= self.free(added.s - 1).num_gens

    def add(self, added: Added) -> None:
        """Add what another copy's (s, t) added; ValueError if it does not match what is here."""
        s, t = added.s, added.t
        if s == 0:
            if added.ncols != self.module.dimension(t):
                raise ValueError("augmentation width does not match the module")
            self.add_generators(0, t, self.field.to_ints(added.rows, added.ncols).astype(np.uint8))
            return
        if added.count and self.free(s - 1).dimension(t, added.target_ngens) != added.ncols:
            raise ValueError("differential width does not match the saved generators below it")
        self.add_generators(s, t, added.rows, added.target_ngens)

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
