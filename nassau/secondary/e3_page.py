"""The E3 page of a resolution as the reference's secondary products read it (REFERENCE-SECONDARY 4.5).

E3 at (n, s) is a subquotient of Ext: the boundaries (the span of the d2 images landing there) and generators that
span the d2-cycles modulo them. Secondary products and Massey products print vectors in these exact bases, so both
are the reference's: every space is in reduced row echelon form with leftmost pivots, the cycles are the RREF
kernel of d2 reduced by the boundaries and reduced again. A bidegree that neither supports a recorded d2 nor
receives one keeps E2 (all of Ext, no boundaries). d2 is recorded from (n, s) where t > 0, both ends are nonzero
and its target (n - 1, s + 2) is lifted. Vectors are uint8 rows over the Ext basis x_(n,s,0), x_(n,s,1), ...
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from charts.model import BidegreeNS
from fp import Subspace, from_bool, quasi_inverse_with_identity, reduce_with_identity, to_bool
from nassau.engine.preimages import LiftError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.secondary.homotopy import SecondaryHomotopy, d2_matrix


@dataclass
class Page:
    """E3 at one bidegree: `gens` and `quotient` are RREF subspaces of Ext there (dimension `dim`)."""

    dim: int
    gens: Subspace
    quotient: Subspace

    def subspace_gens(self) -> np.ndarray:
        """The generators, then the boundaries (which are cycles too): a basis of the cycles, as uint8 rows."""
        return np.concatenate([_rows(self.gens), _rows(self.quotient)])

    def complement_pivots(self) -> list[int]:
        """The basis indices that are a pivot of neither the generators nor the boundaries (the non-cycles)."""
        taken = set(self.gens.pivots.tolist()) | set(self.quotient.pivots.tolist())
        return [i for i in range(self.dim) if i not in taken]

    def reduce_by_quotient(self, vectors: np.ndarray) -> np.ndarray:
        """The rows (uint8) with every boundary pivot cleared."""
        if not len(vectors):
            return vectors.astype(np.uint8)
        return to_bool(self.quotient.reduce(from_bool(vectors.astype(bool))), self.dim).astype(np.uint8)

    @cached_property
    def non_boundaries(self) -> list[int]:
        """The indices that are not a pivot of the boundaries."""
        taken = set(self.quotient.pivots.tolist())
        return [i for i in range(self.dim) if i not in taken]


class E3Page:
    """The d2 matrices a secondary homotopy gives over a region, and the E3 subquotient at each bidegree."""

    def __init__(self, h: SecondaryHomotopy, region: Region) -> None:
        res = h.source
        self.res = res
        #: (n, s) -> uint8 d2 matrix (dim at (n, s)) x (dim at (n - 1, s + 2)), where d2 is recorded.
        self.d2: dict[BidegreeNS, np.ndarray] = {}
        for s, t in region.bidegrees():
            n = t - s
            if t <= 0 or not (self.dim(n, s) and self.dim(n - 1, s + 2)) or not h.is_lifted(s + 2, t + 1):
                continue
            self.d2[(n, s)] = d2_matrix(h, n, s)
        self._pages: dict[BidegreeNS, Page] = {}

    def dim(self, n: int, s: int) -> int:
        return ext_dim(self.res, n, s)

    def page(self, n: int, s: int) -> Page:
        hit = self._pages.get((n, s))
        if hit is None:
            hit = self._pages[(n, s)] = self._page(n, s)
        return hit

    def _page(self, n: int, s: int) -> Page:
        dim = self.dim(n, s)
        quotient = Subspace(dim)
        incoming = self.d2.get((n + 1, s - 2))
        if incoming is not None and incoming.any():
            quotient.add_rows(from_bool(incoming.astype(bool)))
        outgoing = self.d2.get((n, s))
        if outgoing is None:
            cycles = np.eye(dim, dtype=np.uint8)
        else:
            _, kernel = reduce_with_identity(from_bool(outgoing.astype(bool)), outgoing.shape[1])
            cycles = _rows(kernel)
        gens = Subspace(dim)
        if len(cycles):
            gens.add_rows(quotient.reduce(from_bool(cycles.astype(bool))))
        return Page(dim, gens, quotient)

    def d2_preimage(self, n: int, s: int, values: np.ndarray) -> np.ndarray:
        """For rows in the image of d2 from (n, s), preimages (uint8 rows at (n, s)): the RREF of [d2 e_i | e_i]
        read at the values' pivot columns, as the reference's quasi-inverse of a differential."""
        d2 = self.d2.get((n, s))
        if d2 is None:
            raise LiftError(f"d2 from (n={n}, s={s}) is not recorded")
        qi = quasi_inverse_with_identity(from_bool(d2.astype(bool)), d2.shape[1])
        out = qi.apply(from_bool(values.astype(bool)))
        return to_bool(out, d2.shape[0]).astype(np.uint8)


def ext_dim(res: Resolution, n: int, s: int) -> int:
    """dim Ext^{s, n+s} (0 where not computed)."""
    return res.new_gens.get((s, n + s), 0)


def _rows(space: Subspace) -> np.ndarray:
    return to_bool(space.basis, space.ncols).astype(np.uint8)
