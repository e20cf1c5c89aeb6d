"""The text chart must reproduce sseq's `resolve` output byte for byte (golden files in tests/data/sseq)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from charts.model import Chart, Product, rows_rectangle, rows_through_stem
from charts.text import (
    graded_dimension_string,
    parse_filtration_one,
    parse_graded_dimension_string,
    text_chart,
    with_axes,
)

DATA = Path(__file__).parent / "data" / "sseq"

# golden file -> (module, prime, min_degree, rows of the region its command line asked for)
GOLDEN = {
    "resolve-S_2": ("S_2", 2, 0, rows_rectangle(30, 11)),
    "resolve_through_stem-S_2": ("S_2", 2, 0, rows_through_stem(30, 11)),
    "resolve-tmf2": ("tmf2", 2, 0, rows_rectangle(30, 15)),
    "resolve-ko[-2]": ("A-mod-Sq1-Sq2[-2]", 2, -2, rows_rectangle(30, 15)),
    "resolve-C2v14": ("C2v14", 2, 0, rows_rectangle(30, 15)),  # rows 7..15 are blank and dropped
    "resolve-C3": ("C3", 3, 0, rows_rectangle(30, 30)),  # rows 7..30 are blank and dropped
    "resolve-RP_-4_inf": ("RP_-4_inf", 2, -4, rows_rectangle(30, 15)),
    "resolve-S_3": ("S_3", 3, 0, rows_rectangle(50, 10)),
}


def golden_stdout(name: str) -> bytes:
    """The reference's stdout: the golden file minus its first line (the command)."""
    return (DATA / name).read_bytes().split(b"\n", 1)[1]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_round_trip_is_byte_exact(name):
    """Decode the reference's output, rebuild the chart over the region it computed, and print it again."""
    module, prime, min_degree, region = GOLDEN[name]
    expected = golden_stdout(name)
    rows, dims = parse_graded_dimension_string(expected.decode("utf-8"), min_degree)
    assert rows == {s: last for s, last in region.items() if s in rows}
    chart = Chart(module, prime, "standard", region[0], max(region), min_degree, region, dims)
    assert text_chart(chart).encode("utf-8") == expected


def test_golden_dimensions_decode_to_known_classes():
    _, dims = parse_graded_dimension_string(golden_stdout("resolve_through_stem-S_2").decode(), 0)
    assert dims[(0, 11)] == 1 and dims[(14, 4)] == 1 and dims[(18, 4)] == 2 and (13, 4) not in dims
    _, ko = parse_graded_dimension_string(golden_stdout("resolve-ko[-2]").decode(), -2)
    assert ko[(-2, 0)] == 1 and (-1, 0) not in ko


@pytest.mark.parametrize("name", ["resolve_through_stem-S_2", "resolve-RP_-4_inf"])
def test_axes_label_the_rows_by_s_and_every_tenth_stem(name):
    """--axes: s beside each row, the stem under the column of every tenth stem; the rows themselves unchanged."""
    _, _, min_degree, _ = GOLDEN[name]
    text = golden_stdout(name).decode()
    lines = with_axes(text, min_degree).split("\n")
    rows = text.rstrip("\n").split("\n")
    width = len(str(len(rows) - 1))
    assert lines[0] == "s".rjust(width) and lines[-2:] == ["", ""]  # println's blank line kept
    assert [line[:width] for line in lines[1:len(rows) + 1]] == [str(s).rjust(width) for s in range(len(rows))][::-1]
    assert [line[width + 1:] for line in lines[1:len(rows) + 1]] == rows
    axis = lines[len(rows) + 1]
    stems = {n: width + 1 + 2 * (n - min_degree) for n in range(0, 31, 10)}
    assert all(axis[col:col + len(str(n))] == str(n) for n, col in stems.items()) and axis.endswith("30  n")
    assert axis.split()[:-1] == [str(n) for n in stems]


def test_blank_top_rows_are_dropped_and_cells_end_with_a_space():
    chart = Chart("M", 2, "standard", 2, 3, 0, {s: 2 for s in range(4)}, {(0, 0): 1, (2, 1): 3})
    assert graded_dimension_string(chart) == "    ∴ \n·     \n"
    assert text_chart(chart) == "    ∴ \n·     \n\n"


def test_every_count_has_its_character():
    dims = {(n, 0): n for n in range(1, 12)}
    chart = Chart("M", 2, "standard", 11, 0, 0, {0: 11}, dims)
    assert graded_dimension_string(chart) == "  · : ∴ ⁘ ⁙ ⠿ ⡿ ⣿ 9 * * \n"


def test_an_empty_chart_prints_only_the_newline():
    chart = Chart("M", 2, "standard", 3, 2, 0, {s: 3 for s in range(3)}, {})
    assert text_chart(chart) == "\n"


@pytest.mark.parametrize("text", ["· ", "·x\n", "q \n", "·  \n"])
def test_malformed_text_is_refused(text):
    with pytest.raises(ValueError):
        parse_graded_dimension_string(text, 0)


@settings(max_examples=60, deadline=None)
@given(
    min_degree=st.integers(-5, 3),
    width=st.integers(1, 12),
    max_s=st.integers(0, 8),
    rectangle=st.booleans(),
    data=st.data(),
)
def test_random_charts_round_trip(min_degree, width, max_s, rectangle, data):
    max_stem = min_degree + width - 1
    rows = {s: max_stem - s if rectangle else max_stem for s in range(max_s + 1)}
    cells = [(n, s) for s in rows for n in range(min_degree, rows[s] + 1)]
    dims = {b: data.draw(st.integers(1, 10)) for b in cells if data.draw(st.booleans())}
    chart = Chart("M", 2, "standard", max_stem, max_s, min_degree, rows, dims)
    parsed_rows, parsed_dims = parse_graded_dimension_string(text_chart(chart), min_degree)
    assert parsed_dims == dims
    top = max((s for _, s in dims), default=-1)  # rows above the top class are dropped by the reference
    assert parsed_rows == {s: last for s, last in rows.items() if s <= top}


def test_filtration_one_products():
    products = parse_filtration_one(golden_stdout("filtration_one-S_2").decode())
    assert Product("h3", (0, 0, 0), (7, 1, 0)) in products
    assert Product("h1", (8, 2, 0), (9, 3, 0)) in products
    assert not any(p.source == (6, 2, 0) and p.op == "h1" for p in products)  # printed as [0]
    assert len(products) == 27  # the lines with a 1 in them
    c2 = parse_filtration_one(golden_stdout("filtration_one-C2").decode())
    assert Product("h3", (2, 2, 0), (9, 3, 0)) in c2 and Product("h3", (2, 2, 0), (9, 3, 1)) not in c2
    with pytest.raises(ValueError):
        parse_filtration_one("h_0 x_(0, 0) = [1]")


def _read_panels(text: str, min_degree: int) -> tuple[dict[tuple[int, int], str], list[str]]:
    """The cells (n, s) -> character of a chart cut into panels by with_axes(..., width), read back from the panels
    alone (each panel's stems follow the last one's; its widest row is s = 0, which every panel has), and the lines."""
    cells, start = {}, min_degree
    lines = text.rstrip("\n").split("\n")
    for panel in "\n".join(lines).split("\n\n"):
        rows = panel.split("\n")[1:-1]
        label = max(len(row) - len(row.lstrip()) + len(row.lstrip().split(" ")[0]) for row in rows)
        width = 0
        for row in rows:
            s, body = int(row[:label]), row[label + 1:]
            width = max(width, len(body) // 2)
            cells.update({(start + k, s): body[2 * k] for k in range(len(body) // 2) if body[2 * k] != " "})
        axis = panel.split("\n")[-1]
        for n in range(start, start + width):
            if n % 10 == 0:
                assert axis[label + 1 + 2 * (n - start):].startswith(str(n)), (n, axis)
        start += width
    return cells, lines


@settings(max_examples=60, deadline=None)
@given(min_degree=st.integers(-5, 3), stems=st.integers(1, 90), max_s=st.integers(0, 20),
       rectangle=st.booleans(), columns=st.integers(12, 120), data=st.data())
def test_a_chart_wider_than_the_terminal_is_cut_into_panels_that_fit(min_degree, stems, max_s, rectangle, columns,
                                                                     data):
    """with_axes(text, min_degree, width): no line longer than width, every cell in its panel's stem and row, the
    stems under every tenth column; a chart that fits is the chart with its axes, unchanged."""
    max_stem = min_degree + stems - 1
    rows = {s: max(max_stem - s, min_degree) if rectangle else max_stem for s in range(max_s + 1)}
    cells = [(n, s) for s in rows for n in range(min_degree, rows[s] + 1)]
    dims = {b: data.draw(st.integers(1, 3)) for b in cells if data.draw(st.integers(0, 3)) == 0}
    text = text_chart(Chart("M", 2, "standard", max_stem, max_s, min_degree, rows, dims))
    cut = with_axes(text, min_degree, columns)
    whole = with_axes(text, min_degree)
    if max(map(len, whole.split("\n"))) <= columns:
        assert cut == whole
    if not dims:
        return
    read, lines = _read_panels(cut, min_degree)
    assert max(map(len, lines)) <= columns
    assert read == {b: "·:∴"[k - 1] for b, k in dims.items()}
    assert cut.endswith("\n\n")  # println's blank line kept


def test_the_references_chart_on_a_narrow_terminal():
    """S_2 through stem 30 (the reference's chart) at 40 columns: panels of ten stems; at its own width: whole."""
    text = golden_stdout("resolve_through_stem-S_2").decode()
    cut = with_axes(text, 0, 40)
    panels = cut.rstrip("\n").split("\n\n")
    assert [p.split("\n")[-1].split()[:-1] for p in panels] == [["0"], ["10"], ["20"], ["30"]]
    assert max(map(len, cut.split("\n"))) <= 40 and with_axes(text, 0, 80) == with_axes(text, 0)
    exact = max(map(len, with_axes(text, 0).split("\n")))  # as wide as the terminal: not cut; a column less: cut
    assert with_axes(text, 0, exact) == with_axes(text, 0) != with_axes(text, 0, exact - 1)
