"""C-motivic charts in Isaksen's style (Isaksen, "Stable stems", Mem. AMS 2019, its Ext charts): one dot per
generator of Ext over F_2[tau] at (stem, s), tau-free generators black and tau^k-torsion ones coloured by k (red
tau^1, blue tau^2, green tau^3, orange beyond), lines for h0, h1, h2 products, dashed where the product is tau^k
times the target (k >= 1). The grid, axis titles and legend are the classical SVG's (charts.svg); this model holds
what a motivic chart adds, each dot's weight, index and torsion. The lines are greys and olive, so that colour on a dot
always means torsion.""" 
from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from charts.geometry import MARGIN, Frame, fmt
from charts.svg import LEFT, STYLE, SVG_NS, TOP, _axis_titles, _grid, _legend, canvas_size

TORSION_COLOURS = ("#000000", "#c62828", "#1f5fd6", "#2e7d32", "#ef6c00")
"""tau-free, then tau^1, tau^2, tau^3 and tau^4 or more."""
LINE_COLOURS = {"h0": "#000000", "h1": "#8a8a8a", "h2": "#9e9d24"}
LINE_OPS = tuple(LINE_COLOURS)
DASHED_NOTE = "dashed: tau^k times the target"
"""The legend's entry for the dashed lines, the page's too (charts.motivic_page)."""


@dataclass(frozen=True)
class MotivicDot:
    stem: int
    s: int
    weight: int
    #: Its index among the generators of its (stem, s, weight).
    index: int
    #: None: tau-free; k: tau^k kills it.
    torsion: int | None


@dataclass
class MotivicChart:
    """The generators of a motivic Ext over a region and the h_i products between them: (op, source index, target
    index, power of tau), indices into `dots`."""

    module: str
    max_stem: int
    max_s: int
    min_degree: int
    dots: list[MotivicDot]
    lines: list[tuple[str, int, int, int]] = field(default_factory=list)
    #: The largest stem computed in each row s = 0..max_s (None: every row reaches max_stem).
    rows: list[int] | None = None


def torsion_colour(torsion: int | None) -> str:
    return TORSION_COLOURS[0 if torsion is None else min(torsion, len(TORSION_COLOURS) - 1)]


def torsion_name(torsion: int | None) -> str:
    return "tau-free" if torsion is None else f"tau^{torsion}-torsion"


def dot_label(d: MotivicDot) -> str:
    """(stem, s, weight)[index], as the text output names the generator."""
    return f"({d.stem}, {d.s}, {d.weight})[{d.index}]"


def torsions(chart: MotivicChart) -> list[int | None]:
    """The torsion orders the chart's dots have, tau-free first: the legend's entries."""
    return sorted({d.torsion for d in chart.dots}, key=lambda t: -1 if t is None else t)


def motivic_title(chart: MotivicChart) -> str:
    """The heading of the SVG and the page: the page drawn (E2, Ext over A^C itself) and the region."""
    return f"C-motivic E2 chart of {chart.module}, n <= {chart.max_stem}, s <= {chart.max_s}"


def motivic_frame(chart: MotivicChart) -> Frame:
    return Frame(chart.min_degree, chart.max_stem, chart.max_s)


def placement(chart: MotivicChart, frame: Frame) -> tuple[dict[int, tuple[float, float]], dict[int, float]]:
    """Each dot's centre and radius: the generators of a bidegree share it as the classical chart's do."""
    by_cell: dict[tuple[int, int], list[int]] = {}
    for k, d in enumerate(chart.dots):
        by_cell.setdefault((d.stem, d.s), []).append(k)
    place: dict[int, tuple[float, float]] = {}
    radius: dict[int, float] = {}
    for (n, s), ks in by_cell.items():
        r, centres = frame.dots(n, s, len(ks))
        for k, c in zip(ks, centres, strict=True):
            place[k], radius[k] = c, r
    return place, radius


def to_motivic_svg(chart: MotivicChart) -> str:
    """A standalone SVG document: the dots coloured by torsion (with a <title> naming (stem, s, weight)[index]), the
    product lines under them, a legend of both."""
    frame = motivic_frame(chart)
    place, radius = placement(chart, frame)
    colours = LINE_COLOURS
    lines = []
    for op, a, b, power in chart.lines:
        if op not in colours:
            continue
        (x1, y1), (x2, y2) = place[a], place[b]
        dash = ' stroke-dasharray="3 2"' if power else ""
        lines.append(f'<line class="structline" x1="{fmt(x1)}" y1="{fmt(y1)}" x2="{fmt(x2)}" y2="{fmt(y2)}" '
                     f'stroke="{colours[op]}"{dash}/>')
    dots = []
    for k, d in enumerate(chart.dots):
        x, y = place[k]
        what = torsion_name(d.torsion)
        dots.append(f'<circle cx="{fmt(x)}" cy="{fmt(y)}" r="{fmt(radius[k])}" style="fill: '
                    f'{torsion_colour(d.torsion)}"><title>{dot_label(d)} {what}</title></circle>')
    title = escape(motivic_title(chart), quote=False)
    kinds = [(op, colours[op], "line") for op in LINE_OPS]
    if any(power for *_, power in chart.lines):
        kinds.append((DASHED_NOTE, "#444444", "dashed"))
    kinds += [(torsion_name(t), torsion_colour(t), "dot") for t in torsions(chart)]
    width, height, legend_x = canvas_size(frame, motivic_title(chart), [name for name, _, _ in kinds])
    parts = [
        f'<svg version="1.1" width="{width}" height="{height}" viewBox="0 0 {width} {height}" xmlns="{SVG_NS}">',
        f"<title>{title}</title>", f"<style>{STYLE}</style>",
        f'<text class="chart-title" x="{LEFT}" y="4">{title}</text>',
        (f'<svg class="chart" x="{LEFT}" y="{TOP}" width="{frame.width}" height="{frame.height}" '
         f'viewBox="0 0 {frame.width} {frame.height}" overflow="visible">'),
        *_grid(frame), *lines, *dots, "</svg>", *_axis_titles(frame),
        *_legend(kinds, legend_x, TOP + MARGIN), "</svg>",
    ]
    return "\n".join(parts) + "\n"
