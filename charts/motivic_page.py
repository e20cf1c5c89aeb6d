"""The interactive C-motivic page: the classical page (charts.html, assets/chart.js) with what a motivic chart adds.

Each class is a generator of Ext over F_2[tau], named (stem, s, weight)[index] as the text output names it, and
coloured by its tau-torsion order as the SVG colours it (charts.motivic_svg: Isaksen's style, tau-free black); its
tooltip adds the weight and the torsion, and each product line there reads h1 · (8, 3, 5)[0] = (9, 4, 6)[0], with
tau^k before a target when the product is tau^k times it. Those lines are drawn dashed. A legend names the
colours. Pan, zoom, the axes, the line toggles and the hit test are the classical page's own code: the data says
what differs (`colors`, `notes`, `powers`, `legend`).
"""
from __future__ import annotations

from typing import Any

from charts.geometry import MAX_PATTERN
from charts.html import frame_data, number, render_page
from charts.motivic_svg import (
    DASHED_NOTE,
    LINE_COLOURS,
    LINE_OPS,
    MotivicChart,
    dot_label,
    motivic_frame,
    motivic_title,
    placement,
    torsion_colour,
    torsion_name,
    torsions,
)
from charts.style import D2_COLOUR


def to_motivic_html(chart: MotivicChart) -> str:
    """A standalone interactive page of the chart (one file, no network), as `--html` writes it."""
    return render_page(motivic_title(chart), motivic_page_data(chart))


def motivic_page_data(chart: MotivicChart) -> dict[str, Any]:
    """What the script reads (charts.html.page_data's keys), one page: the classes in the chart's order, their dots
    where the SVG puts them, and each product line with its power of tau."""
    frame = motivic_frame(chart)
    place, radius = placement(chart, frame)
    classes, xyr, labels, notes, colours = [], [], [], [], []
    seen: dict[tuple[int, int], int] = {}
    for k, d in enumerate(chart.dots):
        i = seen[(d.stem, d.s)] = seen.get((d.stem, d.s), -1) + 1
        classes += [d.stem, d.s, i]
        xyr += [number(place[k][0]), number(place[k][1]), number(radius[k])]
        labels.append(dot_label(d))
        notes.append(f"weight {d.weight}, {torsion_name(d.torsion)}")
        colours.append(torsion_colour(d.torsion))
    lines: dict[str, list[int]] = {op: [] for op in LINE_OPS}
    powers: dict[str, list[int]] = {op: [] for op in LINE_OPS}
    for op, a, b, power in chart.lines:
        if op in lines:
            lines[op] += [a, b]
            powers[op].append(power)
    rows = chart.rows if chart.rows is not None else [chart.max_stem] * (chart.max_s + 1)
    legend = [{"name": torsion_name(t), "color": torsion_colour(t)} for t in torsions(chart)]
    return {
        "frame": frame_data(frame),
        "rows": rows,
        "max_pattern": MAX_PATTERN,
        "ops": [{"name": op, "dashed": False, "color": LINE_COLOURS[op]} for op in LINE_OPS],
        "d2_color": D2_COLOUR,
        "legend": legend,
        "dashed_note": DASHED_NOTE,
        "pages": [{"name": "E2", "classes": classes, "xyr": xyr, "lines": lines, "powers": powers,
                   "labels": labels, "notes": notes, "colors": colours}],
    }
