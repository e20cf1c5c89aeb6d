"""The machine-readable chart (DESIGN 6): nonzero dimensions and product entries, plus what rebuilds the model.

{"module", "prime", "algorithm", "max_stem", "max_s", "min_degree", "rows": [{"s", "max_stem"}],
 "ext": [{"stem", "s", "dim"}], "operations": [{"op", "shift": [dn, ds]}],
 "products": [{"op", "source": [n, s, i], "target": [n, s, j]}], "d2": [{"source", "target"}]}
"ext" lists nonzero dimensions sorted by (stem, s); products are sorted by (source, op, target) for stable diffs;
"operations" names what the products multiply by (h0..h3 unless the chart was asked for others). "d2" is there
only when the chart knows the differential (an absent key means unknown), so E2-only files stay as they were;
"page" is there only on an E3 chart ("page": "E3"; absent means E2).
"""
from __future__ import annotations

import json
import os
from typing import Any

from charts.atomic import write_text_atomic
from charts.model import Chart, Differential, Product, default_operations


def to_json(chart: Chart) -> dict[str, Any]:
    """The chart as a JSON-ready dict."""
    order = list(chart.operations)
    products = sorted(chart.products, key=lambda p: (p.source, order.index(p.op), p.target))
    data = {
        "module": chart.module,
        "prime": chart.prime,
        "algorithm": chart.algorithm,
        "max_stem": chart.max_stem,
        "max_s": chart.max_s,
        "min_degree": chart.min_degree,
        "rows": [{"s": s, "max_stem": chart.rows[s]} for s in sorted(chart.rows)],
        "ext": [{"stem": n, "s": s, "dim": chart.dim(n, s)} for n, s in chart.nonzero_bidegrees()],
        "operations": [{"op": op, "shift": list(shift)} for op, shift in chart.operations.items()],
        "products": [{"op": p.op, "source": list(p.source), "target": list(p.target)} for p in products],
    }
    if chart.d2:
        data["d2"] = [{"source": list(d.source), "target": list(d.target)}
                      for d in sorted(chart.d2, key=lambda d: (d.source, d.target))]
    if chart.page != "E2":
        data["page"] = chart.page
    return data


def from_json(data: dict[str, Any]) -> Chart:
    """Rebuild a Chart from `to_json`'s dict (the Chart constructor checks that the parts agree)."""
    return Chart(
        module=data["module"],
        prime=data["prime"],
        algorithm=data["algorithm"],
        max_stem=data["max_stem"],
        max_s=data["max_s"],
        min_degree=data["min_degree"],
        rows={row["s"]: row["max_stem"] for row in data["rows"]},
        dims={(e["stem"], e["s"]): e["dim"] for e in data["ext"]},
        products=[Product(p["op"], tuple(p["source"]), tuple(p["target"])) for p in data["products"]],
        operations=({o["op"]: tuple(o["shift"]) for o in data["operations"]} if "operations" in data
                    else default_operations()),
        d2=[Differential(tuple(d["source"]), tuple(d["target"])) for d in data.get("d2", [])],
        page=data.get("page", "E2"),
    )


def write_json(chart: Chart, path: str | os.PathLike[str]) -> None:
    """Write the chart's JSON atomically (temporary file in the same directory, then rename)."""
    write_text_atomic(path, dumps(to_json(chart)))


def dumps(data: dict[str, Any]) -> str:
    """JSON text with one "ext", "rows" or "products" entry per line: compact, yet diffs line by line."""
    fields = []
    for key, value in data.items():
        text = json.dumps(value)
        if isinstance(value, list) and value:
            text = "[\n" + ",\n".join(f"  {json.dumps(v)}" for v in value) + "\n ]"
        fields.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(fields) + "\n}\n"
