"""d2 in the chart model and the E3 page computed from it: bidegrees checked, the JSON keeps it (and leaves E2-only
files as they were), E3 = ker d2 / im d2 with the products it inherits, also when d2 is not generator to generator."""
from __future__ import annotations

import pytest

from charts.json_export import from_json, to_json
from charts.model import Chart, Differential, Product, rows_through_stem
from charts.pages import class_name, e3, pages


def chart(dims, products=(), d2=(), max_stem=4, max_s=4) -> Chart:
    return Chart("M", 2, "standard", max_stem, max_s, 0, rows_through_stem(max_stem, max_s), dict(dims),
                 list(products), d2=list(d2))


def test_d2_must_lower_the_stem_by_one_and_raise_s_by_two():
    dims = {(1, 0): 1, (0, 2): 1, (0, 1): 1}
    chart(dims, d2=[Differential((1, 0, 0), (0, 2, 0))])
    with pytest.raises(ValueError, match="d2 does not map"):
        chart(dims, d2=[Differential((1, 0, 0), (0, 1, 0))])
    with pytest.raises(ValueError, match="does not have"):
        chart(dims, d2=[Differential((1, 0, 0), (0, 2, 1))])


def test_json_carries_d2_only_when_known():
    plain = chart({(1, 0): 1, (0, 2): 1})
    assert "d2" not in to_json(plain)
    known = chart({(1, 0): 1, (0, 2): 1}, d2=[Differential((1, 0, 0), (0, 2, 0))])
    data = to_json(known)
    assert data["d2"] == [{"source": [1, 0, 0], "target": [0, 2, 0]}]
    assert from_json(data).d2 == known.d2 and to_json(from_json(data)) == data


def test_without_d2_there_is_only_e2():
    assert [p.name for p in pages(chart({(0, 0): 1}))] == ["E2"]


def test_e3_drops_sources_and_targets_of_a_generator_to_generator_d2():
    """x_(1,0,0) -> x_(0,2,1) kills both; x_(0,2,0) survives, and h0 on it lands on the survivor x_(0,3,0)."""
    dims = {(1, 0): 1, (0, 2): 2, (0, 3): 1, (2, 0): 1}
    products = [Product("h0", (0, 2, 0), (0, 3, 0)), Product("h0", (0, 2, 1), (0, 3, 0))]
    e2 = chart(dims, products, [Differential((1, 0, 0), (0, 2, 1))])
    page = e3(e2)
    assert page.chart.dims == {(0, 2): 1, (0, 3): 1, (2, 0): 1}
    assert page.representatives == {(0, 2): [0b01], (0, 3): [0b1], (2, 0): [0b1]}
    assert page.chart.products == [Product("h0", (0, 2, 0), (0, 3, 0))]
    assert [p.name for p in pages(e2)] == ["E2", "E3"]


def test_e3_of_a_d2_that_mixes_generators():
    """d2 x_(1,0,0) = x_(0,2,0) + x_(0,2,1), d2 x_(1,0,1) = the same: one cycle x0 + x1 above, one class below,
    represented by x_(0,2,0) (x_(0,2,1) is the same class modulo the boundary)."""
    dims = {(1, 0): 2, (0, 2): 2}
    d2 = [Differential((1, 0, i), (0, 2, j)) for i in range(2) for j in range(2)]
    page = e3(chart(dims, d2=d2))
    assert page.chart.dims == {(1, 0): 1, (0, 2): 1}
    assert page.representatives == {(1, 0): [0b11], (0, 2): [0b01]}
    assert class_name(1, 0, 0b11) == "x_(1, 0, 0) + x_(1, 0, 1)"


def test_products_that_leave_the_cycles_are_not_drawn_on_e3():
    """h1 x_(0,0,0) = x_(1,1,0), which supports a d2: h1 x is not a class of E3."""
    dims = {(0, 0): 1, (1, 1): 1, (0, 3): 1}
    page = e3(chart(dims, [Product("h1", (0, 0, 0), (1, 1, 0))], [Differential((1, 1, 0), (0, 3, 0))]))
    assert page.chart.dims == {(0, 0): 1}
    assert page.chart.products == []


def test_d2_that_does_not_square_to_zero_is_refused():
    dims = {(2, 0): 1, (1, 2): 1, (0, 4): 1}
    with pytest.raises(ValueError, match="square to zero"):
        e3(chart(dims, d2=[Differential((2, 0, 0), (1, 2, 0)), Differential((1, 2, 0), (0, 4, 0))]))


def test_every_drawing_names_its_page():
    """The SVG, the page, SeqSee and the JSON of an E2 chart say E2, of its E3 chart say E3; the page of a chart that
    knows d2 holds both and says so, opening on E3 when asked."""
    import json as json_module

    from charts.html import to_html
    from charts.json_export import dumps
    from charts.seqsee import to_seqsee
    from charts.svg import to_svg

    e2 = chart({(1, 0): 1, (0, 2): 2, (0, 3): 1}, [Product("h0", (0, 2, 0), (0, 3, 0))],
               [Differential((1, 0, 0), (0, 2, 1))])
    third = e3(e2).chart
    assert third.page == "E3" and [p.name for p in pages(third)] == ["E3"]
    assert "<title>E2 chart of M (p = 2, standard), n &lt;= 4, s &lt;= 4</title>" in to_svg(e2)
    assert "<title>E3 chart of M (p = 2, standard), n &lt;= 4, s &lt;= 4</title>" in to_svg(third)
    assert to_seqsee(third)["header"]["metadata"]["htmltitle"].startswith("E3 chart of M (standard)")
    assert "page" not in to_json(e2) and to_json(third)["page"] == "E3"
    assert from_json(json_module.loads(dumps(to_json(third)))).page == "E3"

    def data(html: str) -> dict:
        return json_module.loads(html.split('id="chart-data">')[1].split("</script>")[0])

    both = to_html(e2, show="E3")
    assert "<title>E2 and E3 charts of M (standard), n &lt;= 4, s &lt;= 4</title>" in both
    assert [p["name"] for p in data(both)["pages"]] == ["E2", "E3"] and data(both)["start"] == 1
    assert data(both)["pages"][0]["d2"] and "start" not in data(to_html(e2))
    assert "<title>E3 chart of M" in to_html(third) and [p["name"] for p in data(to_html(third))["pages"]] == ["E3"]
    with pytest.raises(ValueError, match="not E3"):
        to_html(chart({(0, 0): 1}), show="E3")
    with pytest.raises(ValueError, match="from the E2 chart"):
        e3(third)
