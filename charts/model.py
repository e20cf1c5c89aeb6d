"""The chart model: what the engine hands to every exporter.

A chart is a page of the Adams spectral sequence over a computed region, E2 (Ext itself) unless `page` says E3:
its dimensions for each (n, s) the resolution reached, plus the nonzero entries of product matrices: the
filtration-one products h0..h3 by default, or products by any named class (c0, Ph1, g, ...), and, when known, of
the d2 differential. Exporters never see the engine, only this.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

BidegreeNS = tuple[int, int]
"""(n, s): stem n = t - s and filtration s, how charts, classes and printed lines name a bidegree (the engine's
jobs name it (s, t): nassau.engine.region.BidegreeST)."""
Generator = tuple[int, int, int]
"""(n, s, i): generator i of bidegree (n, s), i.e. the class x_(n,s,i)."""

OPS: tuple[str, ...] = ("h0", "h1", "h2", "h3")
"""The filtration-one operations drawn in charts, h_i = Sq^(2^i) (REFERENCE 6.3)."""


_H = re.compile(r"^h(\d+)$")
_A = re.compile(r"^a(\d+)$")  # a_0 = beta at odd primes


def op_shift(op: str) -> tuple[int, int]:
    """(dn, ds) of multiplication by h_i: it raises t by 2^i and s by 1, so the stem by 2^i - 1."""
    m = _H.match(op)
    if m is None:
        raise ValueError(f"{op!r} is not an h_i; its shift is the bidegree of the class it names")
    return 2 ** int(m.group(1)) - 1, 1


def default_operations() -> dict[str, tuple[int, int]]:
    """h0..h3 and their shifts: what a chart carries unless asked for other products."""
    return {op: op_shift(op) for op in OPS}


def reference_op_name(op: str) -> str:
    """The reference's spelling of an operation ("h0" -> "h_0", "a0" -> "a_0" at odd p), used where its formats
    name products; other names (c0, Ph1, g) are kept as they are."""
    m = _H.match(op) or _A.match(op)
    return f"{op[0]}_{m.group(1)}" if m else op


@dataclass(frozen=True)
class Product:
    """One nonzero entry of a filtration-one product matrix: op * source has target in its expansion."""

    op: str
    source: Generator
    target: Generator


@dataclass(frozen=True)
class Differential:
    """One nonzero entry of the matrix of the Adams d2: d2(source) has target in its expansion.

    d2 lowers the stem by 1 and raises s by 2, so a source at (n, s) has its target at (n - 1, s + 2)."""

    source: Generator
    target: Generator


@dataclass
class Chart:
    """Dimensions of Ext over a computed region, and the h_i products between its generators.

    Row s covers stems min_degree .. rows[s]; a missing key of `dims` inside that region means dimension 0.
    Construction checks that the parts agree, so an inconsistent chart fails where it is made, not in a drawing.
    """

    module: str
    prime: int
    algorithm: str
    max_stem: int
    max_s: int
    min_degree: int
    rows: dict[int, int]
    dims: dict[tuple[int, int], int]
    products: list[Product] = field(default_factory=list)
    #: The operations the products use, in drawing order, each with its (dn, ds).
    operations: dict[str, tuple[int, int]] = field(default_factory=default_operations)
    #: The d2 differential where it is known; empty means unknown (only E2 is drawn), not zero.
    d2: list[Differential] = field(default_factory=list)
    #: The page of the Adams spectral sequence drawn: "E2" (Ext itself) or "E3" (charts.pages.e3); every title says it.
    page: str = "E2"

    def __post_init__(self) -> None:
        missing = [s for s in range(self.max_s + 1) if s not in self.rows]
        if missing or any(s > self.max_s or s < 0 for s in self.rows):
            raise ValueError(f"rows must have exactly the keys 0..{self.max_s}; missing {missing}")
        if any(last > self.max_stem for last in self.rows.values()):
            raise ValueError(f"a row reaches beyond max_stem = {self.max_stem}: {self.rows}")
        for (n, s), d in self.dims.items():
            if d < 0 or not self.is_computed(n, s):
                raise ValueError(f"dims[{(n, s)}] = {d} is negative or outside the computed region")
        for p in self.products:
            self._check_product(p)
        for d in self.d2:
            self._check_d2(d)

    def _check_product(self, p: Product) -> None:
        if p.op not in self.operations:
            raise ValueError(f"unknown operation {p.op!r} in {p}")
        dn, ds = self.operations[p.op]
        (n, s, i), (n2, s2, j) = p.source, p.target
        if (n2, s2) != (n + dn, s + ds):
            raise ValueError(f"{p.op} does not map bidegree {(n, s)} to {(n2, s2)}")
        if not (0 <= i < self.dim(n, s) and 0 <= j < self.dim(n2, s2)):
            raise ValueError(f"{p} names a generator that the chart does not have")

    def _check_d2(self, d: Differential) -> None:
        (n, s, i), (n2, s2, j) = d.source, d.target
        if (n2, s2) != (n - 1, s + 2):
            raise ValueError(f"d2 does not map bidegree {(n, s)} to {(n2, s2)}")
        if not (0 <= i < self.dim(n, s) and 0 <= j < self.dim(n2, s2)):
            raise ValueError(f"{d} names a generator that the chart does not have")

    def is_computed(self, n: int, s: int) -> bool:
        """Whether the resolution reached (n, s), so that a zero there is a real zero."""
        return 0 <= s <= self.max_s and self.min_degree <= n <= self.rows[s]

    def dim(self, n: int, s: int) -> int:
        """dim Ext at (n, s); 0 outside the computed region as well as for computed zeros."""
        return self.dims.get((n, s), 0)

    def nonzero_bidegrees(self) -> list[tuple[int, int]]:
        """Bidegrees with at least one generator, sorted by (n, s): the drawing order of the reference."""
        return sorted(b for b, d in self.dims.items() if d > 0)


def rows_through_stem(max_stem: int, max_s: int) -> dict[int, int]:
    """Rows of a resolution through stem N with s <= S: every row reaches stem N."""
    return {s: max_stem for s in range(max_s + 1)}


def rows_rectangle(max_t: int, max_s: int) -> dict[int, int]:
    """Rows of a resolution over the rectangle t <= T, s <= S: row s reaches stem T - s."""
    return {s: max_t - s for s in range(max_s + 1)}
