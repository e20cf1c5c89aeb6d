"""Preimages under a resolution's differentials: what lifting a chain map into it needs (REFERENCE-PRODUCTS 1.3-1.6).

`Preimages(res)(s, t, r)` sends cycles r of degree t (of d_{s-1}, or elements of M_t when s = 0) to elements x of
F_s(t) with d_s x = r (epsilon x = r). Two methods:
- standard: the RREF of [d_s | I] over all of F_s(t) (REFERENCE 3.3), one reduction of the full matrix;
- nassau: zero signature first, then signature by signature (nassau_step.preimages_by_signature) with the
  sub-Hopf algebra B that Nassau's step at (s + 1, t) uses: the blocks are |B| times smaller and most
  signatures are skipped, so a lift costs far less than the full reduction.
Epsilon (s = 0) is always inverted the standard way. Any preimage works, since readouts do not see the choice
(REFERENCE-PRODUCTS 1.5), and both are pure functions of the stored differentials: a resumed run lifts the same
way without saving anything. Standard quasi-inverses are kept in a cache bounded in bytes, so maps lifted one after
another into the same resolution share them.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from fp import QuasiInverse, quasi_inverse_with_identity
from nassau.engine.nassau_step import nassau_qualifies, preimages_by_signature, subalgebra_for
from nassau.engine.standard import augmentation_matrix

if TYPE_CHECKING:
    from nassau.engine.resolution import Resolution

METHODS = ("standard", "nassau")
#: Default cap on the cached standard quasi-inverses (they are dense: image rank x dim F_s(t) bits each).
CACHE_BYTES = 256 << 20


class LiftError(ValueError):
    """A lift asked for something the resolutions do not hold (a bidegree beyond the computed range)."""


class Preimages:
    """Preimages under d_s of one resolution, by the chosen method; counts its work for tests."""

    def __init__(self, res: Resolution, method: str = "standard", cache_bytes: int = CACHE_BYTES) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown quasi-inverse method {method!r} (choose from {', '.join(METHODS)})")
        if method == "nassau" and nassau_qualifies(res.module):
            raise ValueError(f"Nassau preimages need a bounded module over A: {nassau_qualifies(res.module)}")
        self.res = res
        self.method = method
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[tuple[int, int], QuasiInverse] = OrderedDict()
        self._cached = 0
        self._lock = threading.Lock()
        #: Test hooks: full reductions made (standard, epsilon) and preimage calls answered.
        self.counters = {"reductions": 0, "calls": 0}

    def source_ngens(self, s: int, t: int) -> int:
        """Generators of F_s spanning the preimages in degree t (all of degree <= t)."""
        return self.res.free(s).gens_below(t + 1)

    def target_ngens(self, s: int, t: int) -> int:
        """Generators of F_{s-1} spanning the cycles d_s hits in degree t: those of degree < t (minimality)."""
        return self.res.free(s - 1).gens_below(t)

    def __call__(self, s: int, t: int, r: np.ndarray) -> np.ndarray:
        """Preimages of the packed rows r (over F_{s-1}(t)'s first target_ngens generators, or M_t at s = 0),
        packed over F_s(t)'s first source_ngens generators."""
        if not self.res.is_done(s, t):
            raise LiftError(f"the resolution of {self.res.module.name} is not computed at (n={t - s}, s={s})")
        with self._lock:
            self.counters["calls"] += 1
        if s > 0 and self.method == "nassau":
            return self._by_signature(s, t, r)
        return self._standard(s, t).apply(r)

    def _standard(self, s: int, t: int) -> QuasiInverse:
        key = (s, t)
        with self._lock:
            qi = self._cache.get(key)
            if qi is not None:
                self._cache.move_to_end(key)
                return qi
        res = self.res
        ngens = self.source_ngens(s, t)
        if s == 0:
            a, width = augmentation_matrix(res, t, ngens), res.module.dimension(t)
        else:
            fs = res.free(s)
            tgt_ngens = self.target_ngens(s, t)
            a = res.differential(s).matrix(t, np.arange(fs.dimension(t, ngens), dtype=np.int64), tgt_ngens)
            width = res.free(s - 1).dimension(t, tgt_ngens)
        qi = quasi_inverse_with_identity(a, width, res.field)
        with self._lock:
            self.counters["reductions"] += 1
            size = qi.preimage.nbytes
            if size <= self.cache_bytes:
                self._cache[key] = qi
                self._cached += size
                while self._cached > self.cache_bytes:
                    _, old = self._cache.popitem(last=False)
                    self._cached -= old.preimage.nbytes
        return qi

    def _by_signature(self, s: int, t: int, r: np.ndarray) -> np.ndarray:
        res = self.res
        sub = subalgebra_for(res.module, s + 1, t)
        rem = r.copy()
        x = preimages_by_signature(res.differential(s), t, sub, rem, self.source_ngens(s, t), self.target_ngens(s, t),
                                   dense=True)
        if rem.any():
            raise AssertionError(f"Nassau preimages at (n={t - s}, s={s}) over {sub.describe()} left a remainder: "
                                 "the vectors were not cycles")
        return x
