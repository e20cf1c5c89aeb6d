"""SeqSee export: valid against SeqSee's published input schema (vendored in tests/data/seqsee with its notice),
one node per generator, one edge per product entry, every edge end a node and every edge style declared."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from charts.model import Chart, Product, rows_rectangle
from charts.seqsee import to_seqsee
from charts.svg import parse_svg

DATA = Path(__file__).parent / "data"


def golden_chart() -> Chart:
    return parse_svg((DATA / "sseq" / "chart").read_text(encoding="utf-8").split("\n", 1)[1], "S_2")


def validator():
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install jsonschema)")
    schema = json.loads((DATA / "seqsee" / "input_schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema)  # the schema declares draft-07


def crowded_chart() -> Chart:
    """Negative stems and a bidegree with more generators than the SVG has dot patterns for."""
    dims = {(-2, 0): 1, (-2, 1): 14, (0, 0): 2, (1, 1): 1}
    products = [Product("h0", (-2, 0, 0), (-2, 1, 13)), Product("h2", (-2, 0, 0), (1, 1, 0))]
    return Chart("M", 2, "standard", 6, 2, -2, rows_rectangle(6, 2), dims, products)


@pytest.mark.parametrize("make", [golden_chart, crowded_chart])
def test_document_is_valid_against_the_seqsee_schema(make):
    validator().validate(json.loads(json.dumps(to_seqsee(make()))))  # what a file would hold


@pytest.mark.parametrize("make", [golden_chart, crowded_chart])
def test_document_is_self_consistent(make):
    chart = make()
    doc = to_seqsee(chart)
    assert len(doc["nodes"]) == sum(chart.dims.values())
    assert len(doc["edges"]) == len(chart.products)
    styles = doc["header"]["aliases"]["attributes"]
    for edge in doc["edges"]:
        assert edge["source"] in doc["nodes"] and edge["target"] in doc["nodes"]
        assert all(style in styles for style in edge["attributes"])
    for key, node in doc["nodes"].items():
        assert key == f"({node['x']},{node['y']},{node['position']})"


def test_golden_chart_counts_and_header():
    doc = to_seqsee(golden_chart())
    assert len(doc["nodes"]) == 60 and len(doc["edges"]) == 73
    assert doc["header"]["chart"] == {"width": {"min": 0, "max": 20}, "height": {"min": 0, "max": 8}}
    assert doc["header"]["aliases"]["attributes"] == {
        "h_0": [], "h_1": [], "h_2": [{"pattern": "dashed"}], "h_3": [],
    }
    assert {"source": "(0,0,0)", "target": "(7,1,0)", "attributes": ["h_3"]} in doc["edges"]
    assert doc["nodes"]["(18,4,1)"] == {"x": 18, "y": 4, "position": 1}


def test_negative_stems_widen_the_chart():
    doc = to_seqsee(crowded_chart())
    assert doc["header"]["chart"]["width"] == {"min": -2, "max": 6}
    assert set(doc["header"]["aliases"]["attributes"]) == {"h_0", "h_2"}


def test_the_schema_rejects_what_seqsee_would_reject():
    """The validation is live: a malformed document fails it."""
    doc = to_seqsee(crowded_chart())
    doc["nodes"]["(0,0,0)"]["colour"] = "red"
    with pytest.raises(Exception, match="colour"):
        validator().validate(doc)
