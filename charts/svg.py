"""SVG charts in the reference's geometry (REFERENCE 6.4), and a reader that turns such a chart back into a model.

Differences from sseq's SVG, none of which moves a dot or a line: the chart is an inner <svg class="chart"> of the
reference's size, framed by a title above it, axis titles (stem n = t - s, filtration s) and a legend of the lines
drawn; grid lines are two paths instead of one element per line; structlines are grouped in one <g> per operation
(drawn under the dots, not interleaved with them), coloured as the page colours them (charts.style); every dot has
a <title> naming its class; h2 lines are dashed; cells the resolution did not reach are shaded; stems below 0 (a
module with min_degree < 0) shift the frame right instead of falling off it.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from html import escape

from charts.geometry import GRID, MARGIN, MAX_PATTERN, Frame, fmt
from charts.model import Chart, Product, reference_op_name
from charts.pages import title as chart_title
from charts.style import D2_COLOUR, DASHED, op_colours

SVG_NS = "http://www.w3.org/2000/svg"
FONTS = 'Arial, Helvetica, "Liberation Sans", sans-serif'
"""The title's and legend's fonts: Arial's widths (Helvetica's and Liberation Sans' are the same), which
text_width uses to fit the canvas to them."""

STYLE = f"""
circle {{ fill: black; }}
.structline {{ fill: none; }}
.h_2 {{ stroke-dasharray: 4 2; }}
.d2 {{ stroke: {D2_COLOUR}; fill: none; }}
.major-grid {{ stroke: black; opacity: 0.2; shape-rendering: crispEdges; fill: none; }}
.grid {{ stroke: black; opacity: 0.1; shape-rendering: crispEdges; fill: none; }}
.uncomputed {{ fill: black; opacity: 0.06; }}
.x-label {{ text-anchor: middle; dominant-baseline: text-before-edge; }}
.y-label {{ text-anchor: end; dominant-baseline: middle; }}
.count {{ font-size: 8px; dominant-baseline: middle; }}
.chart-title {{ font: bold 14px {FONTS}; dominant-baseline: text-before-edge; }}
.axis-title {{ font: 12px {FONTS}; text-anchor: middle; }}
.legend text {{ font: 12px {FONTS}; dominant-baseline: middle; }}
"""

Dots = dict[tuple[int, int], tuple[float, list[tuple[float, float]]]]


def chart_frame(chart: Chart) -> Frame:
    """The drawn region of a chart: its whole stem range and every filtration up to max_s."""
    return Frame(chart.min_degree, chart.max_stem, chart.max_s)


LEFT, TOP, BOTTOM = 20, 12, 8
"""Room around the chart's frame: the y-axis title left of it; above it the title, which overlaps the frame's own
top margin down to the top row's label; the x-axis title below it."""
LEGEND_ROW = 18
LEGEND_GAP = 14
"""Between the last stem's dots (and a crowded cell's count) and the legend's swatches."""
PAD = 6
"""Blank kept right of the widest thing drawn."""

# Advance widths of ASCII 32..126 in thousandths of an em, Arial (= Helvetica) regular and bold; anything else 0.6 em.
_ARIAL = [int(w) for w in (
    "278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556 556 278 278 "
    "584 584 584 556 1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 667 778 722 667 611 722 667 "
    "944 667 667 611 278 278 278 469 556 333 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 556 556 333 "
    "500 278 556 500 722 500 500 500 334 260 334 584").split()]
_ARIAL_BOLD = [int(w) for w in (
    "278 333 474 556 556 889 722 238 333 333 389 584 278 333 278 278 556 556 556 556 556 556 556 556 556 556 333 333 "
    "584 584 584 611 975 722 722 722 722 667 611 778 722 278 556 722 611 833 722 778 667 778 722 667 611 722 667 "
    "944 667 667 611 333 278 333 584 556 333 556 611 556 611 556 333 611 611 278 278 556 278 889 611 611 611 611 389 "
    "556 333 611 556 778 556 556 500 389 280 389 584").split()]


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of a line of text in FONTS at `size` px (PAD right of it absorbs a few per cent of another
    sans-serif's metrics, where none of FONTS is installed)."""
    widths = _ARIAL_BOLD if bold else _ARIAL
    em = sum(widths[ord(c) - 32] if 32 <= ord(c) < 127 else 600 for c in text) / 1000
    return em * size


def canvas_size(frame: Frame, title: str, legend: list[str]) -> tuple[int, int, float]:
    """(width, height) of a chart's document, fitted to what it draws (the frame's grid, labels and dots, the
    title, the legend beside the grid), and the legend's x."""
    grid_right = LEFT + frame.x(frame.max_n)
    legend_x = grid_right + LEGEND_GAP
    right = max(grid_right + 16, LEFT + text_width(title, 14, bold=True))  # the last stem's dots and label
    if legend:
        right = max(right, legend_x + 28 + max(text_width(name, 12) for name in legend))
    height = TOP + max(frame.height + BOTTOM, MARGIN + LEGEND_ROW * len(legend))
    return int(right + PAD + 0.999), height, legend_x


def to_svg(chart: Chart) -> str:
    """A standalone SVG document (no JavaScript): a title, the chart's dots and lines in the reference's geometry,
    axis titles and a legend of the lines."""
    frame = chart_frame(chart)
    dots: Dots = {(n, s): frame.dots(n, s, chart.dim(n, s)) for n, s in chart.nonzero_bidegrees()}
    title = chart_title(chart)
    escaped = escape(title, quote=False)  # &, <, > as xml.sax.saxutils does (it imports ssl)
    colours = op_colours(list(chart.operations))
    groups = _structline_groups(chart, dots)
    d2 = list(_differentials(chart, dots))
    kinds = [(op, colours[op], "dashed" if op in DASHED else "line") for op, lines in groups.items() if lines]
    if d2:
        kinds.append(("d2", D2_COLOUR, "line"))
    width, height, legend_x = canvas_size(frame, title, [name for name, _, _ in kinds])
    parts = [
        f'<svg version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="{SVG_NS}">',
        f"<title>{escaped}</title>",
        f"<style>{STYLE}</style>",
        f'<text class="chart-title" x="{LEFT}" y="4">{escaped}</text>',
        f'<svg class="chart" x="{LEFT}" y="{TOP}" width="{frame.width}" height="{frame.height}" '
        f'viewBox="0 0 {frame.width} {frame.height}" overflow="visible">',
        *_grid(frame),
        *_uncomputed(chart, frame),
        *_structlines(groups, colours),
        *d2,
        *_dots(dots),
        "</svg>",
        *_axis_titles(frame),
        *_legend(kinds, legend_x, TOP + MARGIN),
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def _axis_titles(frame: Frame) -> Iterator[str]:
    """"stem n = t - s" under the stem labels, "filtration s" beside the filtration labels (turned upright)."""
    x, y = fmt(LEFT + (frame.x(frame.min_n) + frame.x(frame.max_n)) / 2), fmt(TOP + frame.y(0) + 33)
    yield f'<text class="axis-title x-title" x="{x}" y="{y}">stem n = t \u2212 s</text>'
    x, y = 14, fmt(TOP + (frame.y(0) + frame.y(frame.max_s)) / 2)
    yield f'<text class="axis-title y-title" x="{x}" y="{y}" transform="rotate(-90 {x} {y})">filtration s</text>'


def _legend(kinds: list[tuple[str, str, str]], x: float, y: float) -> Iterator[str]:
    """A sample of each kind of thing drawn, with its name: a line in its colour ("line", or "dashed" in its dash,
    h2's 4 2) or a dot in its colour ("dot": a C-motivic chart's torsion colours)."""
    if not kinds:
        return
    yield '<g class="legend">'
    for k, (name, colour, swatch) in enumerate(kinds):
        row = fmt(y + k * LEGEND_ROW)
        if swatch == "dot":
            yield f'<circle cx="{fmt(x + 14)}" cy="{row}" r="4" style="fill: {colour}"/>'
        else:
            dash = ' stroke-dasharray="4 2"' if swatch == "dashed" else ""
            yield (f'<line x1="{fmt(x + 4)}" y1="{row}" x2="{fmt(x + 24)}" y2="{row}" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        yield f'<text x="{fmt(x + 28)}" y="{row}">{escape(name, quote=False)}</text>'
    yield "</g>"


def _grid(frame: Frame) -> Iterator[str]:
    """Grid lines at every integer (major every 4), and axis labels at the major ones and at the top row and the last
    stem (the last stem's only where it does not crowd the label before it)."""
    paths: dict[str, list[str]] = {"major-grid": [], "grid": []}
    labels = []
    y0, y_top = fmt(frame.y(0)), fmt(frame.y(frame.max_s))
    for n in range(frame.min_n, frame.max_n + 1):
        x = fmt(frame.x(n))
        paths["major-grid" if n % 4 == 0 else "grid"].append(f"M{x} {y0}V{y_top}")
        if n % 4 == 0 or (n == frame.max_n and n % 4 >= 2):
            labels.append(f'<text class="x-label" x="{x}" y="{fmt(frame.y(0) + 3)}">{n}</text>')
    x0, x_right = fmt(frame.x(frame.min_n)), fmt(frame.x(frame.max_n))
    for s in range(frame.max_s + 1):
        y = fmt(frame.y(s))
        paths["major-grid" if s % 4 == 0 else "grid"].append(f"M{x0} {y}H{x_right}")
        if s % 4 == 0 or s == frame.max_s:
            labels.append(f'<text class="y-label" x="{fmt(frame.x(frame.min_n) - 5)}" y="{y}">{s}</text>')
    for cls, d in paths.items():
        if d:
            yield f'<path class="{cls}" d="{"".join(d)}"/>'
    yield from labels


def _uncomputed(chart: Chart, frame: Frame) -> Iterator[str]:
    """Shade the cells right of each row's last computed stem, so a blank there does not read as Ext = 0."""
    d = []
    for s in range(frame.max_s + 1):
        last = max(chart.rows[s], frame.min_n - 1)
        if last < frame.max_n:
            x0, x1 = fmt(frame.x(last + 0.5)), fmt(frame.x(frame.max_n + 0.5))
            d.append(f"M{x0} {fmt(frame.y(s + 0.5))}H{x1}V{fmt(frame.y(s - 0.5))}H{x0}Z")
    if d:
        yield f'<path class="uncomputed" d="{"".join(d)}"/>'


def _structline_groups(chart: Chart, dots: Dots) -> dict[str, dict[str, None]]:
    """Each operation's lines in the reference's order (target bidegree, source, target).

    Lines between crowded bidegrees coincide (all their generators share a dot), so each is drawn once.
    """
    groups: dict[str, dict[str, None]] = {op: {} for op in chart.operations}
    for p in sorted(chart.products, key=lambda p: (p.target[:2], p.op, p.source, p.target)):
        (x1, y1), (x2, y2) = dots[p.source[:2]][1][p.source[2]], dots[p.target[:2]][1][p.target[2]]
        groups[p.op][f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}"/>'] = None
    return groups


def _structlines(groups: dict[str, dict[str, None]], colours: dict[str, str]) -> Iterator[str]:
    """One group per operation that has lines, in its colour."""
    for op, lines in groups.items():
        if lines:
            yield f'<g class="structline {reference_op_name(op)}" stroke="{colours[op]}">'
            yield from lines
            yield "</g>"


def _differentials(chart: Chart, dots: Dots) -> Iterator[str]:
    """The d2 lines, blue (the reference's `d2` class, coloured as on the page), when the chart knows d2."""
    lines = {}
    for d in sorted(chart.d2, key=lambda d: (d.source, d.target)):
        (x1, y1), (x2, y2) = dots[d.source[:2]][1][d.source[2]], dots[d.target[:2]][1][d.target[2]]
        lines[f'<line x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}"/>'] = None
    if lines:
        yield '<g class="d2">'
        yield from lines
        yield "</g>"


def _dots(dots: Dots) -> Iterator[str]:
    """A dot per generator with a hover title x_(n,s,i); a crowded bidegree is one dot and its count."""
    for (n, s), (r, centres) in dots.items():
        if len(centres) > MAX_PATTERN:
            x, y = centres[0]
            yield _circle(x, y, r, f"x_({n},{s},0..{len(centres) - 1})")
            yield f'<text class="count" x="{fmt(x + r + 1)}" y="{fmt(y)}">{len(centres)}</text>'
            continue
        for i, (x, y) in enumerate(centres):
            yield _circle(x, y, r, f"x_({n},{s},{i})")


def _circle(x: float, y: float, r: float, title: str) -> str:
    return f'<circle cx="{fmt(x)}" cy="{fmt(y)}" r="{fmt(r)}"><title>{title}</title></circle>'


def parse_svg(text: str, module: str, prime: int = 2, algorithm: str = "standard") -> Chart:
    """Read a chart drawn in the reference's geometry (sseq's or ours) back into a Chart.

    Dots give the dimensions, structlines the products (each end matched to the generator drawn there). An SVG
    does not record which cells were computed, so every row is taken to reach the right edge of the frame.
    """
    root = ET.fromstring(text)
    frame = _read_frame(next((e for e in root.iter(f"{{{SVG_NS}}}svg") if "chart" in (e.get("class") or "").split()),
                             root))
    centres = [(float(c.get("cx")), float(c.get("cy"))) for c in root.iter(f"{{{SVG_NS}}}circle")]
    dims = Counter(_cell(frame, x, y) for x, y in centres)
    for label in _elements_with_class(root, "count"):
        dims[_cell(frame, float(label.get("x")), float(label.get("y")))] = int(label.text)
    products = []
    for line, classes in _structlines_in(root):
        op = next(c.replace("_", "") for c in classes if re.fullmatch(r"h_\d", c))
        source = _generator(frame, dims, float(line.get("x1")), float(line.get("y1")))
        target = _generator(frame, dims, float(line.get("x2")), float(line.get("y2")))
        products.append(Product(op, source, target))
    rows = {s: frame.max_n for s in range(frame.max_s + 1)}
    return Chart(module, prime, algorithm, frame.max_n, frame.max_s, frame.min_n, rows, dict(dims), products)


def _read_frame(root: ET.Element) -> Frame:
    """Recover the frame from the chart's size (ours: the inner <svg class="chart">; sseq's: the document) and one
    x-axis label (which fixes the stem of the left edge)."""
    columns = (float(root.get("width")) - 2 * MARGIN) / GRID
    max_s = round((float(root.get("height")) - 2 * MARGIN) / GRID)
    label = next(_elements_with_class(root, "x-label"), None)
    min_n = 0 if label is None else int(label.text) - round((float(label.get("x")) - MARGIN) / GRID)
    return Frame(min_n, min_n + round(columns), max_s)


def _cell(frame: Frame, x: float, y: float) -> tuple[int, int]:
    return frame.min_n + round((x - MARGIN) / GRID), frame.max_s - round((y - MARGIN) / GRID)


def _generator(frame: Frame, dims: Counter, x: float, y: float) -> tuple[int, int, int]:
    """The generator whose dot is at (x, y); ambiguous in a crowded bidegree, where all share one dot."""
    n, s = _cell(frame, x, y)
    _, centres = frame.dots(n, s, dims[(n, s)]) if dims[(n, s)] else (0, [])
    matches = [i for i, (cx, cy) in enumerate(centres) if abs(cx - x) < 0.01 and abs(cy - y) < 0.01]
    if len(matches) != 1:
        raise ValueError(f"a structline end at ({x}, {y}) matches {len(matches)} generators of {(n, s)}")
    return n, s, matches[0]


def _elements_with_class(root: ET.Element, cls: str) -> Iterator[ET.Element]:
    return (e for e in root.iter() if cls in (e.get("class") or "").split())


def _structlines_in(root: ET.Element, inherited: tuple[str, ...] = ()) -> Iterator[tuple[ET.Element, list[str]]]:
    """Each <line> that is a structline, with its classes and those of enclosing groups (ours group by op)."""
    for child in root:
        classes = inherited + tuple((child.get("class") or "").split())
        if child.tag == f"{{{SVG_NS}}}line" and "structline" in classes:
            yield child, list(classes)
        yield from _structlines_in(child, classes)
