"""Cofibers of a self-map class (sseq's `"cofiber": {"s", "t", "idx"}`; REFERENCE-MODULES 4.4).

The file names a class x = x_(T-S, S, I) of Ext^{S,T}(M) and asks for Ext of the fiber of x: M -> Sigma^T M[S].
Let x~: F_S -> Sigma^T M send the class's generator g to M's bottom cell and the other generators to 0,
K = ker x~ and N = d_S(K) inside F_{S-1}. The complex F_0 <- ... <- F_{S-2} <- F_{S-1}/N is a model of the
fiber, and a minimal resolution of it is M's own F_0..F_{S-1} followed by a minimal resolution of N
(N lies in A-bar F_{S-1}, so nothing cancels). So the cofiber's resolution shares F_0..F_{S-1} with M's,
and at filtration S it covers N_t instead of ker d_{S-1}; above S it is the ordinary standard step.

M's own F_S (and F_{S+1}, to check that x~ is a cocycle) is computed beside it and never saved: the
standard algorithm is deterministic, so a resumed run rebuilds the same N.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algebra.module.interface import Module
from algebra.module.spec import ModuleError
from fp import Subspace, reduce_with_identity
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution


class CofiberError(ModuleError):
    """The cofiber field cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class CofiberSpec:
    s: int
    t: int
    idx: int

    @staticmethod
    def read(module: Module) -> "CofiberSpec | None":
        raw = getattr(module, "cofiber", None)
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise CofiberError(f"{module.source}: 'cofiber' must be an object with integer s, t and idx")
        values = []
        for key in ("s", "t", "idx"):
            v = raw.get(key)
            if isinstance(v, bool) or not isinstance(v, int):
                raise CofiberError(f"{module.source}: the cofiber spec is missing an integer {key!r}")
            values.append(v)
        spec = CofiberSpec(*values)
        if spec.s < 1 or spec.idx < 0:
            raise CofiberError(f"{module.source}: the cofiber class needs s >= 1 and idx >= 0 (got s = {spec.s}, "
                               f"idx = {spec.idx})")
        if module.max_degree is None:
            raise CofiberError(f"{module.source}: a cofiber needs a bounded module")
        return spec

    def base_jobs(self, module: Module, region: Region) -> list[tuple[int, int]]:
        """The bidegrees of M itself the run needs: the region's rows s <= S (the cofiber's (S, t) reads M's
        generators of degree <= t, and the region's own shape supplies those), and the rectangle s <= S + 1,
        t <= T + top cell - bottom cell, where x~ d_{S+1} can be nonzero."""
        top = self.t + module.max_degree - module.min_degree
        rows = {b for b in region.bidegrees() if b[0] <= self.s}
        corner = {(s, t) for s in range(self.s + 2) for t in range(module.min_degree + s, top + 1)}
        return sorted(rows | corner)


class Truncation:
    """The cycles N_t that the cofiber's F_S covers instead of ker d_{S-1}."""

    def __init__(self, base: Resolution, spec: CofiberSpec) -> None:
        self.base, self.spec, self.s = base, spec, spec.s
        fs = base.free(spec.s)
        first = fs.gens_below(spec.t)
        count = base.new_gens.get((spec.s, spec.t), 0)
        if spec.idx >= count:
            raise CofiberError(f"{base.module.source}: cofiber idx {spec.idx} out of range: bidegree "
                               f"(n = {spec.t - spec.s}, s = {spec.s}) has {count} generators")
        self.gen = first + spec.idx

    def _bottom_action(self, e: int) -> np.ndarray:
        """a -> a m0 for the basis a of A_e, as a dense matrix mod p (dim A_e x dim M_{min+e})."""
        m = self.base.module
        table = m.action_table(e, m.min_degree)
        if table is None:
            return np.zeros((m.algebra.dimension(e), m.dimension(m.min_degree + e)), dtype=np.uint8)
        return table[:, 0, :]

    def check_cocycle(self) -> None:
        """x~ d_{S+1} = 0 on every generator of F_{S+1} low enough to see it."""
        base, m = self.base, self.base.module
        d = base.differential(self.s + 1)
        for h in range(base.free(self.s + 1).num_gens):
            # Every term a g of d(h) has |a| = |h| - T, so x~(d h) is one vector of M_{min + |h| - T}.
            total = np.zeros(m.dimension(m.min_degree + int(base.free(self.s + 1).gen_degrees[h]) - self.spec.t),
                             dtype=np.int64)
            for k in range(int(d.term_start[h]), int(d.term_start[h + 1])):
                if int(d.term_gen[k]) == self.gen:
                    action = self._bottom_action(int(d.term_sdeg[k]))
                    total += int(d.term_coef[k]) * action[m.algebra.index(m.algebra.unpack(int(d.term_s[k])))]
            if (total % base.field.p).any():
                n, s = self.spec.t - self.spec.s, self.spec.s
                raise CofiberError(f"{m.source}: the cofiber class x_({n},{s},{self.spec.idx}) is not a cocycle "
                                   f"(it is nonzero on the boundary of {base.free(self.s + 1).gen_names[h]})")

    def cycles(self, t: int) -> Subspace:
        """N_t = d_S(ker x~) in degree t, over F_{S-1}'s generators below t."""
        base = self.base
        fs, target = base.free(self.s), base.free(self.s - 1)
        ngens = fs.gens_below(t + 1)
        target_ngens = target.gens_below(t)
        ncols = target.dimension(t, target_ngens)
        d = base.differential(self.s).matrix(t, np.arange(fs.dimension(t, ngens), dtype=np.int64), target_ngens)
        f = base.field
        space = Subspace(ncols, f)
        if self.gen >= ngens:
            space.add_rows(d)
            return space
        off = fs.offsets(t, ngens)
        lo, hi = int(off[self.gen]), int(off[self.gen + 1])
        space.add_rows(np.concatenate([d[:lo], d[hi:]]))
        if hi > lo:
            act = self._bottom_action(t - self.spec.t)
            kernel = reduce_with_identity(f.from_ints(act), act.shape[1], f)[1]
            if kernel.dim:
                space.add_rows(f.matmul(kernel.basis, d[lo:hi], hi - lo, ncols))
        return space


def share_below(base: Resolution, cut: Truncation) -> Resolution:
    """A resolution holding base's F_0..F_{S-1} (the same objects) that covers N at filtration S."""
    res = Resolution(base.module)
    s = cut.s
    for k in range(s):
        base.free(k)
    res.modules = list(base.modules[:s])
    res.maps = list(base.maps[:s])
    res.augmentation = base.augmentation
    res.new_gens = {b: n for b, n in base.dims().items() if b[0] < s}
    res.truncation = cut
    return res

