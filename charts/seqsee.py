"""SeqSee input JSON (https://github.com/JoeyBF/SeqSee), the format sseq's SeqSeeBackend writes (REFERENCE 6.4).

SeqSee turns it into an interactive HTML chart. Nodes are keyed "(x,y,k)" (the compact generator name), edges
name their ends by those keys, and every style an edge uses is declared as an attribute alias in the header, as
SeqSee's schema requires. Unlike sseq, the width starts at min_degree, so negative stems are kept.
"""
from __future__ import annotations

from typing import Any

from charts.model import Chart, Generator, reference_op_name
from charts.pages import title

EDGE_ATTRIBUTES: dict[str, list[dict[str, str]]] = {"h_2": [{"pattern": "dashed"}], "d2": [{"color": "blue"}]}
"""Edge styles beyond SeqSee's default (solid black): h2 dashed and d2 blue, as in our SVG."""


def node_key(g: Generator) -> str:
    n, s, i = g
    return f"({n},{s},{i})"


def to_seqsee(chart: Chart) -> dict[str, Any]:
    """The chart as a SeqSee document: one node per generator, one edge per nonzero product or d2 entry."""
    nodes = {
        node_key((n, s, k)): {"x": n, "y": s, "position": k}
        for n, s in chart.nonzero_bidegrees()
        for k in range(chart.dim(n, s))
    }
    products = sorted(chart.products, key=lambda p: (p.target[:2], p.op, p.source, p.target))
    edges = [
        {"source": node_key(p.source), "target": node_key(p.target), "attributes": [reference_op_name(p.op)]}
        for p in products
    ]
    edges += [{"source": node_key(d.source), "target": node_key(d.target), "attributes": ["d2"]}
              for d in sorted(chart.d2, key=lambda d: (d.source, d.target))]
    used = {p.op for p in chart.products}
    styles = {reference_op_name(op): EDGE_ATTRIBUTES.get(reference_op_name(op), []) for op in chart.operations if op in used}
    if chart.d2:
        styles["d2"] = EDGE_ATTRIBUTES["d2"]
    return {
        "header": {
            "metadata": {"htmltitle": title(chart, prime=False)},
            "chart": {
                "width": {"min": chart.min_degree, "max": chart.max_stem},
                "height": {"min": 0, "max": chart.max_s},
            },
            "aliases": {"attributes": styles},
        },
        "nodes": nodes,
        "edges": edges,
    }
