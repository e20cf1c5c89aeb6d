"""The reference's text outputs: the chart (REFERENCE 6.1) byte for byte, so ours diffs cleanly against sseq's,
and a reader for its `filtration_one` products (6.2), so tests can compare our product lines with it.

Text chart: one row per s, top row first; each cell is a count character followed by one space; the column of a cell is
n - min_degree. Leading rows that are entirely blank are dropped, so the bottom row is always s = 0.
"""
from __future__ import annotations

import re

from charts.model import Chart, Product, op_shift

COUNT_CHARS = " ·:∴⁘⁙⠿⡿⣿9"
"""The character for 0..9 generators; 10 or more is drawn as OVERFLOW_CHAR."""
OVERFLOW_CHAR = "*"
OVERFLOW_COUNT = 10
"""What the parser reads OVERFLOW_CHAR back as: a lower bound, the text does not say more."""


def count_char(count: int) -> str:
    """The one-character picture of a dimension."""
    return COUNT_CHARS[count] if count < len(COUNT_CHARS) else OVERFLOW_CHAR


def graded_dimension_string(chart: Chart) -> str:
    """sseq's `graded_dimension_string`: the rows from s = max_s down to 0, each ending in a newline."""
    out = ""
    for s in range(chart.max_s, -1, -1):
        cells = (count_char(chart.dim(n, s)) + " " for n in range(chart.min_degree, chart.rows[s] + 1))
        out += "".join(cells) + "\n"
        if out.isspace():
            out = ""  # nothing above the first visible row is printed
    return out


def text_chart(chart: Chart) -> str:
    """What the reference's `resolve` examples print: the string above plus println's own newline."""
    return graded_dimension_string(chart) + "\n"


def with_axes(text: str, min_degree: int, width: int | None = None) -> str:
    """A text chart (graded_dimension_string's rows, with or without println's newline) for a person at a terminal:
    s beside each row (s = 0 at the bottom) and the stem n under every tenth column. The reference prints neither;
    its bytes are the text without them. width: the terminal's columns; a chart wider than that is cut into panels
    of stems, one under another, each with its own axes (breaking at multiples of ten), so that no line wraps."""
    body = text.rstrip("\n")
    rows = body.split("\n") if body else []
    label = len(str(max(len(rows) - 1, 0)))
    last = min_degree + max((len(row) for row in rows), default=0) // 2 - 1
    whole = _panel(rows, label, min_degree, min_degree, last)
    if width is None or max(map(len, whole.split("\n"))) <= width:
        return whole + text[len(body):]
    fits = (width - label - 6) // 2  # stems a panel has room for: "s ", two characters a stem, then "NNN  n"
    chunk = fits // 10 * 10 if fits >= 10 else max(fits, 1)
    panels, start = [], min_degree
    while start <= last:
        end = min(last, (start // 10 * 10 + chunk if chunk % 10 == 0 else start + chunk) - 1)
        panels.append(_panel(rows, label, min_degree, start, end))
        start = end + 1
    return "\n\n".join(panels) + text[len(body):]


def _panel(rows: list[str], label: int, min_degree: int, first: int, last: int) -> str:
    """The stems first..last of the chart's rows (top row first), s at the left of each row and n under every tenth
    column; rows blank in these stems above the top one with a class are left out, as the reference leaves them
    out of the whole chart."""
    cut = [row[2 * (first - min_degree):2 * (last - min_degree + 1)] for row in rows]
    top = next((i for i, row in enumerate(cut) if not row.isspace() and row), len(cut) - 1)
    if first == min_degree:
        top = 0  # the first panel is the whole chart's left part: every row the chart has
    labelled = [f"{'s':>{label}}"] + [f"{len(rows) - 1 - i:>{label}} {row}" for i, row in enumerate(cut) if i >= top]
    axis = " " * (label + 1)
    for n in range(-(-first // 10) * 10, last + 1, 10):
        axis = axis.ljust(label + 1 + 2 * (n - first)) + str(n)
    return "\n".join([*labelled, axis + "  n"])


def parse_graded_dimension_string(text: str, min_degree: int) -> tuple[dict[int, int], dict[tuple[int, int], int]]:
    """Decode a text chart (with or without println's extra newline) into (rows, dims) for a Chart.

    rows[s] is the last stem of row s; dims holds the nonzero counts, with OVERFLOW_CHAR read as OVERFLOW_COUNT.
    Rows the reference dropped (blank rows above the top one) are not recoverable and are not returned.
    """
    if text and not text.endswith("\n"):
        raise ValueError("a text chart ends with a newline")
    lines = text.split("\n")[:-1]
    while lines and lines[-1] == "":
        lines.pop()  # println's newline; a real row is never empty below a nonempty one
    rows: dict[int, int] = {}
    dims: dict[tuple[int, int], int] = {}
    for s, line in enumerate(reversed(lines)):
        if len(line) % 2 or any(c != " " for c in line[1::2]):
            raise ValueError(f"row s={s} is not a sequence of (count character, space) cells: {line!r}")
        rows[s] = min_degree + len(line) // 2 - 1
        for k, char in enumerate(line[::2]):
            count = _decode_count(char, s)
            if count:
                dims[(min_degree + k, s)] = count
    return rows, dims


def _decode_count(char: str, s: int) -> int:
    if char == OVERFLOW_CHAR:
        return OVERFLOW_COUNT
    index = COUNT_CHARS.find(char)
    if index < 0:
        raise ValueError(f"unknown count character {char!r} in row s={s}")
    return index


FILTRATION_ONE_LINE = re.compile(r"h_(\d) x_\((-?\d+), (\d+), (\d+)\) = \[([01, ]*)\]")


def parse_filtration_one(text: str) -> list[Product]:
    """The nonzero entries of the reference's `filtration_one` output (`h_i x_(n, s, j) = [v]`, REFERENCE 6.2)."""
    products = []
    for line in text.splitlines():
        match = FILTRATION_ONE_LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"not a filtration_one line: {line!r}")
        i, n, s, j = (int(g) for g in match.groups()[:4])
        op = f"h{i}"
        dn, ds = op_shift(op)
        vector = [int(v) for v in match.group(5).split(",")]
        products += [Product(op, (n, s, j), (n + dn, s + ds, k)) for k, v in enumerate(vector) if v]
    return products
