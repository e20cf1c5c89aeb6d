"""SVG charts: the reference's geometry, checked against sseq's own S_2 chart (tests/data/sseq/chart)."""
from __future__ import annotations

import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from charts.geometry import DOT_PATTERNS
from charts.html import page_data
from charts.model import OPS, Chart, Differential, Product, op_shift, rows_rectangle, rows_through_stem
from charts.motivic_svg import DASHED_NOTE, MotivicChart, MotivicDot, to_motivic_svg, torsion_colour
from charts.svg import parse_svg, to_svg
from charts.text import parse_filtration_one, parse_graded_dimension_string

DATA = Path(__file__).parent / "data" / "sseq"
SVG = "{http://www.w3.org/2000/svg}"
GOLDEN_LINES = {"h_0": 33, "h_1": 16, "h_2": 14, "h_3": 10}


def reference_stdout(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8").split("\n", 1)[1]


def structlines(elem: ET.Element, inherited: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """(h_i, x1, y1, x2, y2) of every structline, its class taken from the line or an enclosing group."""
    for child in elem:
        classes = inherited + tuple((child.get("class") or "").split())
        if child.tag == SVG + "line" and "structline" in classes:
            op = next(c for c in classes if re.fullmatch(r"h_\d", c))
            yield (op, *(float(child.get(a)) for a in ("x1", "y1", "x2", "y2")))
        yield from structlines(child, classes)


def drawing(svg_text: str) -> tuple[Counter, Counter]:
    """What a reader sees: the multisets of circles (cx, cy, r) and of structlines, independent of element order."""
    root = ET.fromstring(svg_text)
    circles = Counter(tuple(float(c.get(a)) for a in ("cx", "cy", "r")) for c in root.iter(SVG + "circle"))
    return circles, Counter(structlines(root))


def test_golden_chart_decodes_to_60_classes_and_73_products():
    chart = parse_svg(reference_stdout("chart"), "S_2")
    assert (chart.min_degree, chart.max_stem, chart.max_s) == (0, 20, 8)
    assert sum(chart.dims.values()) == 60
    assert Counter(p.op for p in chart.products) == {"h0": 33, "h1": 16, "h2": 14, "h3": 10}


def test_redrawn_golden_chart_has_the_reference_coordinates():
    golden = reference_stdout("chart")
    ours = to_svg(parse_svg(golden, "S_2"))
    circles, lines = drawing(ours)
    assert sum(circles.values()) == 60
    assert Counter(line[0] for line in lines.elements()) == GOLDEN_LINES
    assert (circles, lines) == drawing(golden)
    inner = next(e for e in ET.fromstring(ours).iter(SVG + "svg") if e.get("class") == "chart")
    assert (inner.get("width"), inner.get("height"), inner.get("viewBox")) == ("460", "220", "0 0 460 220")


def test_lines_are_coloured_as_on_the_page_with_a_legend_a_title_and_axis_titles():
    """Each operation's group has the colour the page gives it (h1 and h3 told apart by more than slope), the
    legend shows each kind of line drawn (h2 dashed, d2 last), and the document says what it is and what its axes
    are."""
    chart = parse_svg(reference_stdout("chart"), "S_2", algorithm="nassau")
    root = ET.fromstring(to_svg(chart))
    page_colours = {op["name"]: op["color"] for op in page_data(chart)["ops"]}
    groups = {g.get("class").split()[1]: g.get("stroke") for g in root.iter(SVG + "g")
              if "structline" in (g.get("class") or "")}
    assert groups == {f"h_{i}": page_colours[f"h{i}"] for i in range(4)}
    assert len(set(groups.values())) == 4
    legend = next(g for g in root.iter(SVG + "g") if g.get("class") == "legend")
    samples = [(line.get("stroke"), line.get("stroke-dasharray")) for line in legend.iter(SVG + "line")]
    assert [t.text for t in legend.iter(SVG + "text")] == ["h0", "h1", "h2", "h3"]
    assert samples == [(page_colours[f"h{i}"], "4 2" if i == 2 else None) for i in range(4)]
    texts = {t.get("class"): t.text for t in root.iter(SVG + "text") if t.get("class") in (
        "chart-title", "axis-title x-title", "axis-title y-title")}
    assert texts == {"chart-title": "E2 chart of S_2 (p = 2, nassau), n <= 20, s <= 8",
                     "axis-title x-title": "stem n = t \u2212 s", "axis-title y-title": "filtration s"}
    assert Counter(parse_svg(to_svg(chart), "S_2").products) == Counter(chart.products)
    dims = {(0, 0): 1, (0, 1): 1, (1, 1): 1, (5, 0): 1, (4, 2): 1}
    products = [Product("h0", (0, 0, 0), (0, 1, 0)), Product("h1", (0, 0, 0), (1, 1, 0))]
    with_d2 = Chart("M", 2, "standard", 6, 4, 0, rows_through_stem(6, 4), dims, products,
                    d2=[Differential((5, 0, 0), (4, 2, 0))])
    root = ET.fromstring(to_svg(with_d2))
    legend = next(g for g in root.iter(SVG + "g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(SVG + "text")] == ["h0", "h1", "d2"]  # no h2, h3 lines: not listed
    assert [line.get("stroke") for line in legend.iter(SVG + "line")][-1] == page_data(with_d2)["d2_color"]
    assert f".d2 {{ stroke: {page_data(with_d2)['d2_color']};" in root.find(SVG + "style").text


def test_chart_from_reference_text_and_filtration_one_draws_the_reference_lines():
    """Dims from the text chart and products from filtration_one (n <= 10, s <= 5) give sseq's dots and lines."""
    rows, dims = parse_graded_dimension_string(reference_stdout("resolve_through_stem-S_2"), 0)
    dims = {(n, s): d for (n, s), d in dims.items() if n <= 20 and s <= 8}
    products = parse_filtration_one(reference_stdout("filtration_one-S_2"))
    chart = Chart("S_2", 2, "standard", 20, 8, 0, rows_through_stem(20, 8), dims, products)
    circles, lines = drawing(to_svg(chart))
    golden_circles, golden_lines = drawing(reference_stdout("chart"))
    in_region = Counter({  # lines whose target (x2, y2) is at n <= 10, s <= 5
        line: k for line, k in golden_lines.items() if line[3] <= 30 + 10 * 20 + 4 and line[4] >= 30 + 3 * 20 - 4
    })
    assert circles == golden_circles
    assert sum(lines.values()) == 27 and lines == in_region


def test_every_dot_has_a_title_naming_its_class():
    chart = parse_svg(reference_stdout("chart"), "S_2")
    root = ET.fromstring(to_svg(chart))
    titles = [c.find(SVG + "title").text for c in root.iter(SVG + "circle")]
    expected = [f"x_({n},{s},{i})" for n, s in chart.nonzero_bidegrees() for i in range(chart.dim(n, s))]
    assert sorted(titles) == sorted(expected)
    for circle, title in zip(root.iter(SVG + "circle"), titles, strict=True):
        n, s, _ = (int(v) for v in title[3:-1].split(","))
        assert abs(float(circle.get("cx")) - (30 + 20 * n)) <= 4
        assert abs(float(circle.get("cy")) - (30 + 20 * (8 - s))) <= 4


def test_h2_lines_are_dashed_and_the_document_has_no_script():
    text = to_svg(parse_svg(reference_stdout("chart"), "S_2"))
    assert re.search(r"\.h_2 \{[^}]*stroke-dasharray", text)
    assert '<g class="structline h_2" ' in text and "<script" not in text and "javascript" not in text.lower()


def test_dot_patterns_follow_the_reference_rules():
    for count, (radius, offsets) in enumerate(DOT_PATTERNS, start=1):
        assert len(offsets) == len(set(offsets)) == count
        assert radius == (2.0 if count <= 4 else 1.5)
        assert all(abs(dx) <= 4 and abs(dy) <= 4 for dx, dy in offsets)


def test_crowded_and_patterned_bidegrees_round_trip():
    """1..12 generators use the pattern table; 13 and more are one dot with the count written beside it."""
    counts = list(range(1, 14)) + [40]
    dims = {(n, 0): d for n, d in enumerate(counts)}
    dims[(1, 1)] = 1
    products = [Product("h1", (0, 0, 0), (1, 1, 0))]
    chart = Chart("M", 2, "standard", len(counts) - 1, 1, 0, rows_through_stem(len(counts) - 1, 1), dims, products)
    text = to_svg(chart)
    root = ET.fromstring(text)
    assert sum(1 for _ in root.iter(SVG + "circle")) == sum(range(1, 13)) + 2 + 1
    assert [t.text for t in root.iter(SVG + "text") if t.get("class") == "count"] == ["13", "40"]
    again = parse_svg(text, "M")
    assert again.dims == dims and again.products == products


def test_lines_between_crowded_bidegrees_are_drawn_once_and_cannot_be_read_back():
    dims = {(0, 0): 13, (0, 1): 13}
    products = [Product("h0", (0, 0, i), (0, 1, i)) for i in range(13)]
    text = to_svg(Chart("M", 2, "standard", 1, 1, 0, rows_through_stem(1, 1), dims, products))
    assert sum(drawing(text)[1].values()) == 1
    with pytest.raises(ValueError, match="matches 13 generators"):
        parse_svg(text, "M")


def test_negative_stems_shift_the_frame_and_round_trip():
    rows = rows_rectangle(6, 2)
    dims = {(-2, 0): 1, (-2, 1): 1, (-1, 1): 1, (0, 0): 2}
    products = [Product("h0", (-2, 0, 0), (-2, 1, 0)), Product("h1", (-2, 0, 0), (-1, 1, 0))]
    chart = Chart("ko[-2]", 2, "standard", 6, 2, -2, rows, dims, products)
    text = to_svg(chart)
    root = ET.fromstring(text)
    assert next(e for e in root.iter(SVG + "svg") if e.get("class") == "chart").get("width") == str(8 * 20 + 60)
    assert (30.0, 70.0, 2.0) in drawing(text)[0]  # stem -2, s = 0 sits at the left edge
    labels = {t.text: float(t.get("x")) for t in root.iter(SVG + "text") if t.get("class") == "x-label"}
    assert labels == {"0": 70.0, "4": 150.0, "6": 190.0}  # the last stem too
    again = parse_svg(text, "ko[-2]")
    assert (again.min_degree, again.max_stem, again.dims, again.products) == (-2, 6, dims, products)


def test_uncomputed_cells_are_shaded_only_where_rows_stop_short():
    dims = {(0, 0): 1}
    assert 'class="uncomputed"' not in to_svg(Chart("M", 2, "standard", 5, 3, 0, rows_through_stem(5, 3), dims))
    text = to_svg(Chart("M", 2, "standard", 5, 3, 0, rows_rectangle(5, 3), dims))
    shade = next(p for p in ET.fromstring(text).iter(SVG + "path") if p.get("class") == "uncomputed")
    assert shade.get("d").count("M") == 3  # rows s = 1, 2, 3 stop before stem 5


def test_names_are_escaped():
    chart = Chart('A<&>"', 2, "standard", 1, 0, 0, {0: 1}, {(0, 0): 1})
    assert ET.fromstring(to_svg(chart)).find(SVG + "title").text.startswith('E2 chart of A<&>"')
    assert '<title>E2 chart of A&lt;&amp;&gt;"' in to_svg(chart)  # &, <, > only, as xml.sax.saxutils.escape


def test_the_cli_imports_no_network_modules() -> None:
    """Escaping a title takes html.escape, not xml.sax.saxutils.escape, which imports urllib, http and ssl
    (1.5 MiB of every run's memory)."""
    code = ("import sys, nassau.cli.main; "
            "print(sorted(m for m in ('urllib.request', 'http.client', 'ssl') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def dense_chart(stems: int, max_s: int, seed: int = 0) -> Chart:
    """Every bidegree nonzero (1..3 classes), every h_i product that lands in the frame present."""
    rng = random.Random(seed)
    dims = {(n, s): rng.choice((1, 1, 2, 3)) for n in range(stems + 1) for s in range(max_s + 1)}
    products = []
    for (n, s), d in dims.items():
        for op in OPS:
            dn, ds = op_shift(op)
            target = dims.get((n + dn, s + ds))
            products += [Product(op, (n, s, i), (n + dn, s + ds, i % target)) for i in range(d) if target]
    return Chart("dense", 2, "standard", stems, max_s, 0, rows_through_stem(stems, max_s), dims, products)


@pytest.mark.parametrize("stems, max_s", [(100, 40)])
def test_a_dense_chart_stays_small(stems, max_s):
    """About 7,000 dots and 27,000 lines: each element must cost tens of bytes, not hundreds."""
    chart = dense_chart(stems, max_s)
    text = to_svg(chart)
    circles, lines = drawing(text)
    elements = sum(circles.values()) + sum(lines.values())
    assert sum(circles.values()) == sum(chart.dims.values())
    assert len(text.encode()) / elements < 60, f"{len(text.encode())} bytes for {elements} dots and lines"


def labels(text: str, cls: str) -> list[str]:
    return [t.text for t in ET.fromstring(text).iter(SVG + "text") if t.get("class") == cls]


def test_the_top_row_and_the_last_stem_are_labelled():
    """Labels every fourth row and stem, and the top row (s = 15 of `--stem 40`) and the last stem too, the last
    stem only two or more stems beyond the label before it (closer, the two would crowd each other)."""
    assert labels(to_svg(dense_chart(42, 15)), "y-label") == ["0", "4", "8", "12", "15"]
    assert labels(to_svg(dense_chart(42, 15)), "x-label")[-2:] == ["40", "42"]
    assert labels(to_svg(dense_chart(41, 16)), "y-label") == ["0", "4", "8", "12", "16"]
    assert labels(to_svg(dense_chart(41, 16)), "x-label")[-2:] == ["36", "40"]


def motivic_chart(tau_multiple: bool) -> MotivicChart:
    dots = [MotivicDot(0, 0, 0, 0, None), MotivicDot(0, 1, 1, 0, 1), MotivicDot(1, 1, 2, 0, None), MotivicDot(3, 2, 5, 0, 2)]
    return MotivicChart("M", 4, 3, 0, dots, [("h0", 0, 1, 0), ("h1", 0, 2, int(tau_multiple))])


def test_the_motivic_legend_shows_dots_for_the_colours_and_the_dashed_tau_multiples():
    """The torsion colours are dots (tau-free black, tau^k coloured), not line samples like h0's; the dashed lines
    (tau^k times the target) have their entry, as on the page, when the chart has any."""
    root = ET.fromstring(to_motivic_svg(motivic_chart(True)))
    legend = next(g for g in root.iter(SVG + "g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(SVG + "text")] == [
        "h0", "h1", "h2", DASHED_NOTE, "tau-free", "tau^1-torsion", "tau^2-torsion"]
    assert [c.get("style") for c in legend.iter(SVG + "circle")] == [
        f"fill: {torsion_colour(t)}" for t in (None, 1, 2)]
    lines = list(legend.iter(SVG + "line"))
    assert [line.get("stroke-dasharray") for line in lines] == [None, None, None, "4 2"]
    plain = ET.fromstring(to_motivic_svg(motivic_chart(False)))
    assert DASHED_NOTE not in [t.text for t in plain.iter(SVG + "text")]
