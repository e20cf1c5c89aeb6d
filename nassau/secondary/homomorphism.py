"""The secondary lift of a product map, and what it reads: products in Mod_{C lambda^2} (REFERENCE-SECONDARY 4.2-4.3).

c: F^M -> F^k of shift (s_x, t_x) is the chain map lifted from a class x of Ext(M) (nassau.lifting.chain_map). Its
secondary lift is a homotopy h^c_s: F^M_s -> F^k_{s - s_x - 1} of shift (s_x + 1, t_x) witnessing d c - c d = 0:
composite -sigma(c) sigma(d^M) + sigma(d^k) sigma(c), and beyond the A-terms of its own composites the terms
h^k(c x) with the A-terms of k's composites on c x (k's secondary resolution acting fully) and c(h^M x).

Read off at a bidegree b of Ext(k), the pair (c, h^c) gives [x] [y] = [x y] + lambda w for y in Ext(k) at b: x y is
c's readout (with the sign (-1)^{s_x t_b}, so that -1 = 1 + 2 carries h0 into the lambda part), and w is h^c's
readout (plus that of a chain map for a lambda part of x, if it has one), reduced modulo the image of d2.
"""
from __future__ import annotations

import numpy as np

from charts.model import BidegreeNS
from nassau.engine.region import Region
from nassau.lifting.chain_map import ChainMap
from nassau.products.filtration_one import h_matrix
from nassau.secondary.e3_page import E3Page, ext_dim
from nassau.secondary.homotopy import SecondaryHomotopy
from nassau.secondary.lift import SecondaryError, SecondaryLift, Term


class SecondaryHomomorphism(SecondaryLift):
    """h^c for a chain map c: F^M -> F^k lifted from a class, given the secondary resolutions of M and k."""

    def __init__(self, c: ChainMap, source: SecondaryHomotopy, target: SecondaryHomotopy, region: Region) -> None:
        if source.source is not c.source or target.source is not c.target:
            raise ValueError("the secondary resolutions must be those of the map's source and target")
        super().__init__(c.source, c.target, (c.s_shift + 1, c.t_shift), region, f"the secondary lift of {c.name}")
        self.c, self.source_lift, self.target_lift = c, source, target

    def composite_terms(self, s: int) -> list[Term]:
        c = self.c
        return [(3, self.source.differential(s), c.free_map(s - 1)),
                (1, c.free_map(s), self.target.differential(s - c.s_shift))]

    def inputs_ready(self, s: int, t: int) -> bool:
        c = self.c
        return (c.is_lifted(s, t) and c.is_lifted(s - 2, t - 1) and self.source_lift.is_lifted(s, t)
                and self.target_lift.is_lifted(s - c.s_shift, t - c.t_shift))

    def extra_terms(self, s: int, t: int, ngens: int) -> np.ndarray:
        c = self.c
        out = self.target_lift.act(s - c.s_shift, t - c.t_shift, c.images(s, t), ngens, full=True)
        return out ^ c.free_map(s - 2).apply(t - 1, self.source_lift.images(s, t), ngens)

    # -- readouts ----------------------------------------------------------------------------------------------
    def hom_k_with(self, b: BidegreeNS, inputs: np.ndarray, lam: ChainMap | None = None,
                   page: E3Page | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For each row y of `inputs` (uint8, over Ext(k) at b): ([x] [y]'s Ext part at b + x, its lambda part at
        b + x + (0, 1)), as uint8 rows. lam is a chain map for a lambda part of x (shift one filtration up); with a
        page, the lambda part is reduced modulo the image of d2."""
        c = self.c
        n, s = b[0] + c.t_shift - c.s_shift, b[1] + c.s_shift
        t_b = b[0] + b[1]
        m0, m1 = readout(c, s, n + s), readout(self, s + 1, n + s + 1)
        if lam is not None:
            m1 = m1 + readout(lam, s + 1, n + s + 1)
        sign = 3 if c.s_shift * t_b % 2 else 1
        ys = inputs.astype(np.int64)
        scratch = (ys @ m0) * sign  # as integers: -1 = 1 + 2 carries h0 into the lambda part
        lam_part = (ys * sign % 2) @ m1 + (scratch // 2 % 2) @ h_matrix(self.source, 0, n, s).astype(np.int64)
        lam_part = (lam_part % 2).astype(np.uint8)
        if page is not None:
            lam_part = page.page(n, s + 1).reduce_by_quotient(lam_part)
        return (scratch % 2).astype(np.uint8), lam_part

    def product_nullhomotopy(self, b: BidegreeNS, ext: np.ndarray, lam_vec: np.ndarray, lam: ChainMap | None,
                             page: E3Page) -> np.ndarray:
        """For y = [ext] + lambda lam_vec at b with x y = 0 in Ext: z at b + x + (1, -1) with d2 z = the lambda
        part of x y (so x y = lambda d2 z = 0 in Mod_{C lambda^2}), as a uint8 vector."""
        c = self.c
        n, s = b[0] + c.t_shift - c.s_shift, b[1] + c.s_shift
        dim_z, dim_lam = ext_dim(self.source, n + 1, s - 1), ext_dim(self.source, n, s + 1)
        if not dim_z or not dim_lam:
            return np.zeros(dim_z, dtype=np.uint8)
        prod_ext, prod_lam = self.hom_k_with(b, ext[None, :], lam)
        if prod_ext.any():
            raise SecondaryError(f"the product of {c.name} and the class at (n={b[0]}, s={b[1]}) is not zero in "
                                 f"Ext: {prod_ext[0].tolist()}")
        if len(lam_vec):
            prod_lam = (prod_lam.astype(np.int64) + lam_vec.astype(np.int64) @ readout(c, s + 1, n + s + 1)) % 2
        return page.d2_preimage(n + 1, s - 1, prod_lam.astype(np.uint8))[0]


def readout(f: ChainMap, s: int, t: int) -> np.ndarray:
    """f.hom_k(s, t) as int64, or the zero matrix of its shape where either side has no generators (and f need not
    be lifted)."""
    rows = ext_dim(f.target, t - f.t_shift - s + f.s_shift, s - f.s_shift)
    cols = ext_dim(f.source, t - s, s)
    return f.hom_k(s, t).astype(np.int64) if rows and cols else np.zeros((rows, cols), dtype=np.int64)
