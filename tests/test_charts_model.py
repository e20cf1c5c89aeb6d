"""The Chart constructor refuses inconsistent parts, so engine bugs surface where the chart is built."""
from __future__ import annotations

import pytest

from charts.model import Chart, Product, op_shift, reference_op_name, rows_rectangle, rows_through_stem


def make(**changes) -> Chart:
    fields = dict(
        module="S_2", prime=2, algorithm="standard", max_stem=3, max_s=2, min_degree=0,
        rows=rows_through_stem(3, 2), dims={(0, 0): 1, (0, 1): 1, (1, 1): 1},
        products=[Product("h0", (0, 0, 0), (0, 1, 0)), Product("h1", (0, 0, 0), (1, 1, 0))],
    )
    return Chart(**(fields | changes))


def test_a_consistent_chart_is_accepted():
    chart = make()
    assert chart.dim(0, 1) == 1 and chart.dim(2, 2) == 0
    assert chart.is_computed(3, 2) and not chart.is_computed(4, 0) and not chart.is_computed(0, 3)
    assert chart.nonzero_bidegrees() == [(0, 0), (0, 1), (1, 1)]


@pytest.mark.parametrize("changes, message", [
    (dict(rows={0: 3, 1: 3}), "keys 0..2"),
    (dict(rows={0: 3, 1: 3, 2: 3, 3: 3}), "keys 0..2"),
    (dict(rows={0: 4, 1: 3, 2: 3}), "beyond max_stem"),
    (dict(dims={(5, 0): 1}, products=[]), "outside the computed region"),
    (dict(rows=rows_rectangle(3, 2), dims={(3, 1): 1}, products=[]), "outside the computed region"),
    (dict(dims={(0, 0): -1}, products=[]), "negative"),
    (dict(products=[Product("h1", (0, 0, 0), (0, 1, 0))]), "does not map"),
    (dict(products=[Product("h0", (0, 0, 1), (0, 1, 0))]), "does not have"),
    (dict(products=[Product("h5", (0, 0, 0), (0, 1, 0))]), "unknown operation"),
])
def test_inconsistent_parts_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        make(**changes)


def test_region_helpers_and_op_degrees():
    assert rows_through_stem(5, 1) == {0: 5, 1: 5}
    assert rows_rectangle(30, 2) == {0: 30, 1: 29, 2: 28}
    assert [op_shift(op) for op in ("h0", "h1", "h2", "h3")] == [(0, 1), (1, 1), (3, 1), (7, 1)]
    assert reference_op_name("h2") == "h_2"
