"""The E3 page of a chart that knows d2: E3 = ker d2 / im d2 at every bidegree, with the products it inherits.

A class of E3 is named by a representative, a vector in the E2 basis x_(n,s,0), x_(n,s,1), ... of its bidegree.
The representatives are reduced modulo im d2 and in echelon form, so when d2 maps generators to generators they
are exactly the generators that neither support nor receive a d2. A product op x of E3 classes is drawn when op x
is a d2-cycle (always for h0..h3, which are permanent); where d2 leaves the computed region it counts as zero.
Vectors over F2 are Python ints, bit j standing for x_(n,s,j): the matrices here are a few generators wide.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from charts.model import BidegreeNS, Chart, Product


@dataclass
class Page:
    """A page drawn like a chart: its chart (dims and products in its own basis) and each class's representative
    in the E2 basis, (n, s) -> [vector of generator 0, vector of generator 1, ...]."""

    name: str
    chart: Chart
    representatives: dict[BidegreeNS, list[int]]


def pages(chart: Chart) -> list[Page]:
    """The chart's own page (E2, or an E3 chart), and E3 beside an E2 chart that knows d2."""
    own = Page(chart.page, chart, {b: [1 << j for j in range(d)] for b, d in chart.dims.items()})
    return [own, e3(chart)] if chart.d2 and chart.page == "E2" else [own]


def title(chart: Chart, names: list[str] | None = None, prime: bool = True) -> str:
    """What every drawing of the chart is headed by, naming its page (or the pages `names` it shows):
    "E3 chart of S_2 (p = 2, nassau), n <= 30, s <= 10"."""
    shown = " and ".join(names or [chart.page])
    about = f"p = {chart.prime}, {chart.algorithm}" if prime else chart.algorithm
    charts = "charts" if names and len(names) > 1 else "chart"
    return f"{shown} {charts} of {chart.module} ({about}), n <= {chart.max_stem}, s <= {chart.max_s}"


def e3(chart: Chart) -> Page:
    """ker d2 / im d2 at each bidegree, and the products of the E2 chart carried over to it."""
    if chart.page != "E2":
        raise ValueError(f"E3 is drawn from the E2 chart, not from {chart.page}")
    d2 = _matrices((d.source, d.target) for d in chart.d2)
    cycles, boundaries, reps = {}, {}, {}
    for (n, s), dim in chart.dims.items():
        cycles[(n, s)] = _kernel(d2.get((n, s), {}), dim)
        boundaries[(n, s)] = _echelon(list(d2.get((n + 1, s - 2), {}).values()))
    for b, zs in cycles.items():
        for v in boundaries[b]:
            if _reduce(v, zs):
                raise ValueError(f"d2 does not square to zero: a boundary at {b} is not a cycle")
        reps[b] = _echelon([r for z in zs if (r := _reduce(z, boundaries[b]))])
    products = []
    for op, shift in chart.operations.items():
        by_op = _matrices((p.source, p.target) for p in chart.products if p.op == op)
        for (n, s), classes in reps.items():
            target = (n + shift[0], s + shift[1])
            for k, v in enumerate(classes):
                w = _apply(by_op.get((n, s), {}), v)
                if not w or _reduce(w, cycles.get(target, [])):
                    continue  # zero, or not a d2-cycle: no product on E3
                w = _reduce(w, boundaries[target])
                products += [Product(op, (n, s, k), (*target, i)) for i, r in enumerate(reps[target])
                             if w >> _pivot(r) & 1]
    dims = {b: len(r) for b, r in reps.items() if r}
    page = Chart(chart.module, chart.prime, chart.algorithm, chart.max_stem, chart.max_s, chart.min_degree,
                 dict(chart.rows), dims, products, dict(chart.operations), page="E3")
    return Page("E3", page, {b: r for b, r in reps.items() if r})


def class_name(n: int, s: int, vector: int) -> str:
    """x_(n, s, j) for a generator, a sum of them for any other representative."""
    return " + ".join(f"x_({n}, {s}, {j})" for j in range(vector.bit_length()) if vector >> j & 1)


def _matrices(entries) -> dict[BidegreeNS, dict[int, int]]:
    """(source bidegree) -> {source index: vector of targets} from (source, target) generator pairs."""
    out: dict[BidegreeNS, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for (n, s, i), (_, _, j) in entries:
        out[(n, s)][i] ^= 1 << j
    return out


def _apply(matrix: dict[int, int], v: int) -> int:
    out = 0
    for i, image in matrix.items():
        if v >> i & 1:
            out ^= image
    return out


def _pivot(v: int) -> int:
    return v.bit_length() - 1


def _reduce(v: int, echelon: list[int]) -> int:
    """v minus its part in the span of `echelon` (distinct pivots, each cleared from the others' columns)."""
    for e in echelon:
        if v >> _pivot(e) & 1:
            v ^= e
    return v


def _echelon(vectors: list[int]) -> list[int]:
    """A reduced echelon basis of the span: distinct leading bits, each absent from every other vector."""
    basis: list[int] = []
    for v in vectors:
        v = _reduce(v, basis)
        if v:
            basis = [b ^ v if b >> _pivot(v) & 1 else b for b in basis] + [v]
    return sorted(basis)


def _kernel(matrix: dict[int, int], dim: int) -> list[int]:
    """A reduced echelon basis of the vectors v of F2^dim with matrix v = 0."""
    rows: list[tuple[int, int]] = []  # (image, preimage) with distinct image pivots
    kernel = []
    for i in range(dim):
        image, pre = matrix.get(i, 0), 1 << i
        for im, p in rows:
            if image >> _pivot(im) & 1:
                image, pre = image ^ im, pre ^ p
        if image:
            rows.append((image, pre))
        else:
            kernel.append(pre)
    return _echelon(kernel)
