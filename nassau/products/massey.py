"""Massey products <a, b, c> for a, b in Ext(k) and every c in Ext(M) with c b = 0 (REFERENCE-PRODUCTS 3).

For each bidegree of Ext(M), the c with c b = 0 are the kernel of the product matrix by b (its RREF basis, as the
reference takes it). Each such c is lifted to f_c: F -> U, B: U -> U is b's chain map, h a null-homotopy of B f_c,
and the bracket's representative is the cochain a h read at c + a + b - (1, 0). Its indeterminacy is
Ext(M) a + c Ext(k) in that bidegree; the offset printed is the representative reduced modulo it (canonical given the
Ext bases), and brackets that contain 0 are omitted. All f_c are lifted together, then all homotopies, so every
step shares the quasi-inverses of U.

Over F_p the signs are the reference's: d h = B f - h d (nassau.lifting.chain_homotopy), the bracket read as
a's coordinates of h with no further sign, so <a, b, c> is defined up to the sign conventions of the literature
(which put (-1)^{1 + deg} on the outer factors); at p = 3, <h_0, h_0, h_0> = b_0 reads [1] or [2] accordingly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fp import Subspace, reduce_with_identity
from nassau.engine.region import Region
from nassau.lifting.chain_homotopy import ChainHomotopy
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ClassError, ExtClass
from nassau.products.product_lines import below_top, nonzero_bidegrees, vector_text


class MasseyError(ValueError):
    """The bracket is not defined as asked (a b is not zero, or nothing lies in the computed range)."""


@dataclass(frozen=True)
class Bracket:
    """<a, b, c> = offset + indeterminacy, in the Ext basis at c + a + b - (1, 0)."""

    c: ExtClass
    offset: tuple[int, ...]
    indeterminacy: tuple[tuple[int, ...], ...]

    def line(self) -> str:
        rows = ", ".join(vector_text(r) for r in self.indeterminacy)
        x = f"x_({self.c.n}, {self.c.s}, {vector_text(self.c.vector)})"
        return f"<a, b, {x}> = {vector_text(self.offset)} + {{{rows}}}"


def shift_of(a: ExtClass, b: ExtClass) -> tuple[int, int]:
    """(n, s) by which <a, b, -> moves a class: a + b - (1, 0) in (s, t), i.e. (n_a + n_b + 1, s_a + s_b - 1)."""
    return a.n + b.n + 1, a.s + b.s - 1


def massey_products(alg: ExtAlgebra, a: ExtClass, b: ExtClass, region: Region, threads: int = 1) -> list[Bracket]:
    """<a, b, c> for every c in the kernel of b at each bidegree of M's region whose bracket lands in the region,
    in the reference's order; brackets containing 0 are left out."""
    unit, res = alg.unit, alg.module
    a.check_in(unit, "the class a")
    b.check_in(unit, "the class b")
    if not a.array.any() or not b.array.any():
        raise ClassError("a and b must be nonzero classes")
    ab = alg.unit_algebra.products(b, [(a.n, a.s)]).get((a.n, a.s))
    if ab is None:
        raise MasseyError(f"the product a b lies at (n={a.n + b.n}, s={a.s + b.s}), outside the computed range")
    if times(a, ab, alg.p).any():
        raise MasseyError(f"<a, b, -> is not defined: a b = {vector_text(times(a, ab, alg.p))} is not zero")
    sn, ss = shift_of(a, b)
    if not below_top(region, sn, ss):
        raise MasseyError("no bracket lands in the computed range (the shift a + b - 1 lies beyond it)")
    degrees = [x for x in nonzero_bidegrees(res, region) if below_top(region, x[0] + b.n, x[1] + b.s)]
    f = res.field
    kernels = {x: _kernel(m, f) for x, m in alg.products(b, degrees).items()}
    classes = [ExtClass(n, s, tuple(int(v) for v in row)) for (n, s), k in kernels.items() for row in k
               if below_top(region, n + sn, s + ss) and alg.dim(res, n + sn, s + ss)]
    if not classes:
        return []
    b_map = alg.unit_algebra.class_map(b, [(sn, ss)])
    lefts = [ChainMap.from_class(res, unit, c.n, c.s, c.array, Region.through([(c.n + sn, c.s + ss)], res.min_degree),
                                 str(c)) for c in classes]
    lift(lefts, threads)
    homotopies = [ChainHomotopy(f, b_map, f.region, f"{f.name} b") for f in lefts]
    lift(homotopies, threads)
    out = []
    for c, h in zip(classes, homotopies):
        tn, ts = c.n + sn, c.s + ss
        rep = times(a, h.hom_k(ts, tn + ts), alg.p)
        indeterminacy = _indeterminacy(alg, a, c, (sn, ss), len(rep))
        offset = indeterminacy.reduce(f.from_ints(rep[None, :]))
        if offset.any():
            out.append(Bracket(c, tuple(int(v) for v in f.to_ints(offset, len(rep))[0]),
                               tuple(tuple(int(v) for v in row) for row in f.to_ints(indeterminacy.basis, len(rep)))))
    return out


def times(x: ExtClass, matrix: np.ndarray, p: int) -> np.ndarray:
    """x times a product matrix whose rows are the basis of x's bidegree, over F_p."""
    return (x.array.astype(np.int64) @ matrix.astype(np.int64)) % p


def _kernel(product: np.ndarray, f) -> np.ndarray:
    """RREF basis of {v : v P = 0} (rows of uint8), in increasing pivot order, as the reference reduces [P | I]."""
    _, kernel = reduce_with_identity(f.from_ints(product), product.shape[1], f)
    return f.to_ints(kernel.basis, product.shape[0]).astype(np.uint8)


def _indeterminacy(alg: ExtAlgebra, a: ExtClass, c: ExtClass, shift: tuple[int, int], dim: int) -> Subspace:
    """Ext(M) a + c Ext(k) at c + shift, as an RREF subspace."""
    f = alg.module.field
    space = Subspace(dim, f)
    tn, ts = c.n + shift[0], c.s + shift[1]
    below = (tn - a.n, ts - a.s)
    if alg.computed(*below) and alg.dim(alg.module, *below):
        ya = alg.products(a, [below]).get(below)
        if ya is not None and ya.size:
            space.add_rows(f.from_ints(ya))
    n_z, s_z = shift
    zs = alg.dim(alg.unit, n_z, s_z)
    for k in range(zs):
        z = ExtClass(n_z, s_z, tuple(int(i == k) for i in range(zs)))
        cz = alg.products(z, [(c.n, c.s)]).get((c.n, c.s))
        if cz is not None and cz.size:
            space.add_rows(f.from_ints(times(c, cz, alg.p)[None, :]))
    return space
