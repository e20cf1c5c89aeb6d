"""Products [x] [y] in Mod_{C lambda^2}, as the reference's secondary_product prints them (REFERENCE-SECONDARY 4.6).

x is a d2-cycle of Ext(M); y runs over Ext(k) at every nonzero bidegree b of the unit, stem by stem. Classes of Ext(k)
that support a d2 (the complement of the E3 cycles at b) only lift as lambda y, and [x] lambda y = lambda x y; the
cycles (E3 generators, then the boundaries) give [x] [y] = [x y] + lambda w with w modulo the image of d2, read off
the secondary lift of x's chain map (nassau.secondary.homomorphism). A bidegree is printed when M is computed at
b + x + (0, 1) and at b + x + (1, -1), where the lambda part and the d2 hitting it live.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from charts.model import BidegreeNS
from nassau.engine.preimages import LiftError
from nassau.engine.region import Region
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_class import ExtClass
from nassau.products.product_lines import vector_text
from nassau.secondary.e3_page import E3Page, ext_dim
from nassau.secondary.homomorphism import SecondaryHomomorphism
from nassau.secondary.homotopy import SecondaryHomotopy, d2_matrix
from nassau.secondary.lift import SecondaryError


@dataclass
class SecondaryExt:
    """The lifted secondary resolutions of M and of the unit k (the same object when M is k) with their regions:
    what secondary products and Massey products read."""

    module: SecondaryHomotopy
    module_region: Region
    unit: SecondaryHomotopy
    unit_region: Region
    threads: int = 1

    @cached_property
    def module_page(self) -> E3Page:
        return E3Page(self.module, self.module_region)

    @cached_property
    def unit_page(self) -> E3Page:
        return self.module_page if self.unit is self.module else E3Page(self.unit, self.unit_region)

    def lift(self, maps: list[ChainMap]) -> None:
        """Lift chain maps into k's resolution (each after the maps it reads)."""
        lift(maps, self.threads)

    def secondary_map(self, c: ChainMap) -> SecondaryHomomorphism:
        """The secondary lift of a chain map F^M -> F^k (or F^k -> F^k) lifted from a class, lifted."""
        source = self.module if c.source is self.module.source else self.unit
        h = SecondaryHomomorphism(c, source, self.unit, self.module_region if source is self.module
                                  else self.unit_region)
        self.lift([h])
        return h


@dataclass(frozen=True)
class ProductLine:
    """[x] [y] = [ext] + lambda lam for y a cycle at b, or [x] lambda y = lambda ext for y = x_(b, i) a class that
    supports a d2 (then `lam` is None)."""

    b: BidegreeNS
    y: tuple[int, ...]
    ext: tuple[int, ...]
    lam: tuple[int, ...] | None

    def text(self, name: str) -> str:
        if self.lam is None:
            return f"[{name}] λ {basis_text(self.b, self.y)} = λ {vector_text(self.ext)}"
        return f"[{name}] [{basis_text(self.b, self.y)}] = {vector_text(self.ext)} + λ {vector_text(self.lam)}"


def basis_text(b: BidegreeNS, v) -> str:
    """`x_(n, s, i) + x_(n, s, j)` for the nonzero entries of v."""
    return " + ".join(f"x_({b[0]}, {b[1]}, {i})" for i, x in enumerate(v) if x)


def computed(ext: SecondaryExt, n: int, s: int) -> bool:
    """Whether M's secondary data reach (n, s): in its region and resolved there, or below the module's bottom."""
    res = ext.module.source
    return s >= 0 and (n < res.min_degree or (ext.module_region.contains(s, n + s) and res.is_done(s, n + s)))


def check_d2_cycle(h: SecondaryHomotopy, x: ExtClass, what: str) -> None:
    """Refuse x unless d2 x is computed and zero (x lifts to Mod_{C lambda^2})."""
    try:
        d2 = d2_matrix(h, x.n, x.s) if x.t > 0 else None
    except LiftError:
        d2 = None
    if d2 is None:
        raise SecondaryError(f"{what} ({x}): its d2, at (n={x.n - 1}, s={x.s + 2}), is not computed")
    value = (x.array.astype(np.int64) @ d2) % 2
    if value.any():
        raise SecondaryError(f"{what} ({x}) supports a nonzero d2 ({vector_text(value)} at (n={x.n - 1}, "
                             f"s={x.s + 2})), so it does not lift to Mod_{{Cλ²}}")


def secondary_products(ext: SecondaryExt, x: ExtClass, name: str) -> list[ProductLine]:
    """[x] times every class of Ext(k) whose product lands where M is computed, in the reference's order."""
    res, k = ext.module.source, ext.unit.source
    x.check_in(res, f"the class {name}")
    check_d2_cycle(ext.module, x, f"the class {name}")
    c = ChainMap.from_class(res, k, x.n, x.s, x.array, ext.module_region, name)
    ext.lift([c])
    hc = ext.secondary_map(c)
    out = []
    for s_b, t_b in sorted(ext.unit_region.bidegrees(), key=lambda b: (b[1] - b[0], b[0])):
        b = (t_b - s_b, s_b)
        n, s = b[0] + x.n, b[1] + x.s
        if not k.new_gens.get((s_b, t_b)) or not computed(ext, n, s + 1) or not computed(ext, n + 1, s - 1):
            continue
        if not ext_dim(res, n, s) and not ext_dim(res, n, s + 1):
            continue
        page = ext.unit_page.page(*b)
        if ext_dim(res, n, s):
            rows = c.hom_k(s, n + s)
            for i in page.complement_pivots():
                out.append(ProductLine(b, tuple(int(j == i) for j in range(page.dim)), tuple(rows[i].tolist()),
                                       None))
        ys = page.subspace_gens()
        if len(ys):
            prod, lam = hc.hom_k_with(b, ys, page=ext.module_page)
            out.extend(ProductLine(b, tuple(y.tolist()), tuple(e.tolist()), tuple(w.tolist()))
                       for y, e, w in zip(ys, prod, lam, strict=True))
    return out
