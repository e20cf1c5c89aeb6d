"""The interactive chart page: one self-contained HTML file with pan and zoom, tooltips, line toggles and pages.

The page is assets/chart.html with assets/chart.css, assets/chart.js and the chart's data inlined, so it opens
from a file with no network. The script is plain DOM and canvas code (no library): what it needs, pan, zoom, axes
and a hit test, is a few hundred lines, less than any pan-zoom library plus the glue to drive it. Dots sit where
the SVG draws them (charts.geometry), in the same units; d2 lines and an E2/E3 switch appear when the chart knows
d2 (charts.pages). The C-motivic page (charts.motivic_page) is this page with per-class colours and notes and
powers of tau on the lines.
"""
from __future__ import annotations

import json
from html import escape
from importlib.resources import files
from typing import Any

from charts.geometry import GRID, MARGIN, MAX_PATTERN, Frame
from charts.model import Chart
from charts.pages import Page, class_name, pages, title
from charts.style import D2_COLOUR, DASHED, op_colours
from charts.svg import chart_frame


def to_html(chart: Chart, show: str | None = None) -> str:
    """The chart as a standalone HTML page: its pages (E2 and E3 when it knows d2), `show` (a page's name: E3 for
    `--page 3`) the one on screen when it opens, else the first."""
    data = page_data(chart)
    names = [p["name"] for p in data["pages"]]
    if show is not None and show != names[0]:
        if show not in names:
            raise ValueError(f"the page shows {' and '.join(names)}, not {show}")
        data["start"] = names.index(show)
    return render_page(title(chart, names, prime=False), data)


def render_page(title: str, page: dict[str, Any]) -> str:
    """The page's template with its styles, script and `page` (what page_data returns, or the motivic page's
    charts.motivic_page.motivic_page_data) inlined."""
    assets = files("charts") / "assets"
    data = json.dumps(page, separators=(",", ":")).replace("<", "\\u003c")
    parts = {
        "{{TITLE}}": escape(title),
        "{{STYLE}}": assets.joinpath("chart.css").read_text(encoding="utf-8"),
        "{{SCRIPT}}": assets.joinpath("chart.js").read_text(encoding="utf-8"),
        "{{DATA}}": data,
    }
    text = assets.joinpath("chart.html").read_text(encoding="utf-8")
    for key, value in parts.items():
        text = text.replace(key, value)
    return text


def notebook_html(chart: Chart, height: int = 520, show: str | None = None) -> str:
    """The page (to_html's, `show` on screen) in an iframe, for a notebook cell: its script and styles stay inside
    the frame."""
    return notebook_frame(to_html(chart, show), height)


def notebook_frame(page: str, height: int = 520) -> str:
    """A page (to_html's, or the motivic one) in a sandboxed iframe."""
    return (f'<iframe srcdoc="{escape(page)}" style="width: 100%; height: {height}px; border: 1px solid '
            f'#ddd" sandbox="allow-scripts"></iframe>')


def page_data(chart: Chart) -> dict[str, Any]:
    """What the script reads: the frame, the rows computed, the operations with their colours (the SVG's), and each
    page's classes and lines."""
    colours = op_colours(list(chart.operations))
    return {
        "frame": frame_data(chart_frame(chart)),
        "rows": [chart.rows[s] for s in range(chart.max_s + 1)],
        "max_pattern": MAX_PATTERN,
        "ops": [{"name": op, "dashed": op in DASHED, "color": colours[op]} for op in chart.operations],
        "d2_color": D2_COLOUR,
        "pages": [_page(p) for p in pages(chart)],
    }


def frame_data(frame: Frame) -> dict[str, int]:
    """The drawn region as the script reads it (chart units are the SVG's)."""
    return {"min_n": frame.min_n, "max_n": frame.max_n, "max_s": frame.max_s, "grid": GRID, "margin": MARGIN,
            "width": frame.width, "height": frame.height}


def _page(page: Page) -> dict[str, Any]:
    """Classes as flat (n, s, i) triples and their dots as (x, y, r); lines as flat pairs of class indices."""
    chart, frame = page.chart, chart_frame(page.chart)
    classes, xyr, labels, index = [], [], {}, {}
    for n, s in chart.nonzero_bidegrees():
        radius, centres = frame.dots(n, s, chart.dim(n, s))
        for i, (x, y) in enumerate(centres):
            index[(n, s, i)] = len(index)
            classes += [n, s, i]
            xyr += [number(x), number(y), number(radius)]
            vector = page.representatives[(n, s)][i]
            if vector != 1 << i:
                labels[index[(n, s, i)]] = class_name(n, s, vector)
    lines: dict[str, list[int]] = {op: [] for op in chart.operations}
    for p in sorted(chart.products, key=lambda p: (p.source, p.target)):
        lines[p.op] += [index[p.source], index[p.target]]
    out = {"name": page.name, "classes": classes, "xyr": xyr, "lines": lines}
    if labels:
        out["labels"] = labels
    if chart.d2:
        out["d2"] = [i for d in sorted(chart.d2, key=lambda d: (d.source, d.target))
                     for i in (index[d.source], index[d.target])]
    return out


def number(v: float) -> int | float:
    """A coordinate for the page's JSON: an int when whole, else two decimals (as the SVG writes it)."""
    return int(v) if v == int(v) else round(v, 2)
