"""TikZ charts in the reference's format (REFERENCE-UNSTABLE 1.4), byte for byte: what its unstable_chart prints.

The picture is the SVG geometry scaled by 1/GRID with the y axis upward and shifted so that the chart's bottom-left
cell is (0, 0): a grid line at every integer ("major-grid" every 4, with a label), then per nonzero bidegree in (n, s)
order its dots and the lines of the products into it (operation by operation, source generator by source
generator). Dot offsets and radii are computed in single precision and printed as the shortest decimal that reads
back as the same float, as the reference's f32 formatting does ("2.85", "0.075", "3").
"""
from __future__ import annotations

import numpy as np

from charts.geometry import CROWD_RADIUS, DOT_PATTERNS, GRID, MAX_PATTERN
from charts.model import Chart, Product, reference_op_name

PREAMBLE = ("\\begin{tikzpicture}[\n  major-grid/.style={ opacity = 0.2 },\n  grid/.style={ opacity = 0.1 },\n"
            "  d2/.style={ blue },\n]\n")


def f32(v: float) -> str:
    """A single-precision number as the reference prints it: shortest round trip, integers without a point."""
    return np.format_float_positional(np.float32(v), unique=True, trim="-")


def to_tikz(chart: Chart, header: str = "") -> str:
    """The tikzpicture of a chart; `header` (a line of TikZ, e.g. a title node) goes after the grid."""
    width, height = chart.max_stem - chart.min_degree, chart.max_s
    out = [PREAMBLE]
    for x in range(width + 1):
        major = x % 4 == 0
        out.append(f"\\draw [{'major-grid' if major else 'grid'}] ({x}, 0) -- ({x}, {height});\n")
        if major:
            out.append(f"\\node [below] at ({x}, 0) {{{x}}};\n")
    for y in range(height + 1):
        major = y % 4 == 0
        out.append(f"\\draw [{'major-grid' if major else 'grid'}] (0, {y}) -- ({width}, {y});\n")
        if major:
            out.append(f"\\node [left] at (0, {y}) {{{y}}};\n")
    out.append(header)
    into: dict[tuple[int, int], list[Product]] = {}
    for p in chart.products:
        into.setdefault(p.target[:2], []).append(p)
    rank = {op: k for k, op in enumerate(chart.operations)}
    for n, s in chart.nonzero_bidegrees():
        if n - chart.min_degree > width or s > height:
            continue
        radius, _ = _dots(chart, n, s)
        for x, y in _dots(chart, n, s)[1]:
            out.append(f"\\draw [fill] ({x}, {y}) circle ({radius});\n")
        for p in sorted(into.get((n, s), []), key=lambda p: (rank[p.op], p.source[2], p.target[2])):
            x1, y1 = _dots(chart, *p.source[:2])[1][p.source[2]]
            x2, y2 = _dots(chart, n, s)[1][p.target[2]]
            out.append(f"\\draw [{reference_op_name(p.op)}] ({x1}, {y1}) -- ({x2}, {y2});\n")
    out.append("\\end{tikzpicture}\n")
    return "".join(out)


def _dots(chart: Chart, n: int, s: int) -> tuple[str, list[tuple[str, str]]]:
    """The radius and the centre of each generator of (n, s), as printed."""
    count = chart.dim(n, s)
    x, y = np.float32(n - chart.min_degree), np.float32(s)
    if count > MAX_PATTERN:
        return f32(np.float32(CROWD_RADIUS) / np.float32(GRID)), [(f32(x), f32(y))] * count
    radius, offsets = DOT_PATTERNS[count - 1]
    scale = np.float32(GRID)
    return f32(np.float32(radius) / scale), [(f32(x + np.float32(dx) / scale), f32(y - np.float32(dy) / scale))
                                             for dx, dy in offsets]
