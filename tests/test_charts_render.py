"""Render our SVG with a real browser (headless Chromium) and look at the pixels: dots where the chart has
classes, nothing dark in the cells where it has none. Skipped, with the reason, when no Chromium is installed."""
from __future__ import annotations

import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

from charts.html import page_data
from charts.model import Chart, Product, rows_rectangle
from charts.svg import chart_frame, parse_svg, to_svg
from tests.browser import browser_path, no_browser_reason

DATA = Path(__file__).parent / "data" / "sseq"
SVG = "{http://www.w3.org/2000/svg}"
DARK, LIGHT = 100, 150  # grey levels: a dot's centre is nearly black; grid lines and shading stay above LIGHT


def find_browser() -> str:
    path = browser_path()
    if path is None:
        pytest.skip(no_browser_reason())
    return path


def render(svg_text: str, tmp_path: Path) -> np.ndarray:
    """The SVG as a (height, width, 3) array of RGB levels 0..255, at one CSS pixel per device pixel.

    The window is made larger than the chart and the screenshot cropped: headless Chromium shows less than
    --window-size asks for when the window is small, and the SVG sits at the top left of the page either way.
    """
    root = ET.fromstring(svg_text)
    width, height = int(root.get("width")), int(root.get("height"))
    svg, png = tmp_path / "chart.svg", tmp_path / "chart.png"
    svg.write_text(svg_text, encoding="utf-8")
    command = [
        find_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}", "--force-device-scale-factor=1",
        f"--window-size={max(width, 1000)},{height + 400}", f"--screenshot={png}", svg.as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert png.exists(), f"Chromium wrote no screenshot (exit {result.returncode}): {result.stderr[-2000:]}"
    return decode_png(png.read_bytes())[:height, :width, :3].astype(np.int32)


def chart_origin(svg_text: str) -> tuple[int, int]:
    """Where the chart (the reference's frame, the inner <svg class="chart">) sits in the document."""
    inner = next(e for e in ET.fromstring(svg_text).iter(SVG + "svg") if e.get("class") == "chart")
    return int(inner.get("x")), int(inner.get("y"))


def decode_png(data: bytes) -> np.ndarray:
    """A minimal PNG reader (8-bit RGB/RGBA, not interlaced: what Chromium writes), so the test needs no Pillow."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unsupported PNG {header}"
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        up = out[y - 1] if y else np.zeros_like(line)
        if kind in (0, 2):
            out[y] = (line + (up if kind == 2 else 0)) % 256
            continue
        row = out[y]
        for x in range(len(line)):  # Sub, Average and Paeth depend on the byte to the left
            a = row[x - bpp] if x >= bpp else 0
            c = up[x - bpp] if x >= bpp else 0
            if kind == 1:
                pred = a
            elif kind == 3:
                pred = (a + up[x]) // 2
            else:
                p = a + up[x] - c
                pa, pb, pc = abs(p - a), abs(p - up[x]), abs(p - c)
                pred = a if pa <= pb and pa <= pc else up[x] if pb <= pc else c
            row[x] = (line[x] + pred) % 256
    return out.reshape(height, width, bpp).astype(np.uint8)


def check_pixels(chart: Chart, svg_text: str, rgb: np.ndarray) -> None:
    left, top = chart_origin(svg_text)
    grey = rgb.mean(axis=2)[top:, left:]
    frame = chart_frame(chart)
    for n, s in chart.nonzero_bidegrees():
        for x, y in frame.dots(n, s, chart.dim(n, s))[1]:
            block = grey[int(y) - 1:int(y) + 1, int(x) - 1:int(x) + 1]
            assert block.min() < DARK, f"no dot drawn for a class at {(n, s)} (pixel {x}, {y})"
    empty = [(n, s) for n in range(frame.min_n, frame.max_n + 1) for s in range(frame.max_s + 1) if not chart.dim(n, s)]
    assert empty
    for n, s in empty:
        x, y = int(frame.x(n)), int(frame.y(s))
        assert grey[y, x] > LIGHT, f"dark pixel at the empty cell {(n, s)}: grey {grey[y, x]}"


def test_reference_chart_renders_with_dots_exactly_at_its_classes(tmp_path):
    chart = parse_svg((DATA / "chart").read_text(encoding="utf-8").split("\n", 1)[1], "S_2")
    text = to_svg(chart)
    check_pixels(chart, text, render(text, tmp_path))


def test_lines_legend_title_and_axis_titles_render_in_colour(tmp_path):
    """h1 lines red and h3 lines purple on the screen (as the page draws them), the legend's samples in the same
    colours, and dark text where the title and the axis titles are."""
    chart = parse_svg((DATA / "chart").read_text(encoding="utf-8").split("\n", 1)[1], "S_2")
    text = to_svg(chart)
    rgb = render(text, tmp_path)
    left, top = chart_origin(text)
    frame = chart_frame(chart)
    colours = {op["name"]: op["color"] for op in page_data(chart)["ops"]}

    def near(x: float, y: float, colour: str) -> bool:
        want = np.array([int(colour[k:k + 2], 16) for k in (1, 3, 5)])
        block = rgb[round(y) - 2:round(y) + 3, round(x) - 2:round(x) + 3].reshape(-1, 3)
        return bool((np.abs(block - want).max(axis=1) < 60).any())

    dots = {(n, s, i): xy for n, s in chart.nonzero_bidegrees()
            for i, xy in enumerate(frame.dots(n, s, chart.dim(n, s))[1])}
    for op, source, target in [("h1", (0, 0, 0), (1, 1, 0)), ("h3", (0, 0, 0), (7, 1, 0))]:
        (x1, y1), (x2, y2) = dots[source], dots[target]
        assert near(left + (x1 + x2) / 2, top + (y1 + y2) / 2, colours[op]), op
    legend = next(g for g in ET.fromstring(text).iter(SVG + "g") if g.get("class") == "legend")
    for line, name in zip(legend.iter(SVG + "line"), (t.text for t in legend.iter(SVG + "text")), strict=True):
        assert near((float(line.get("x1")) + float(line.get("x2"))) / 2 + 1, float(line.get("y1")), colours[name])
    grey = rgb.mean(axis=2)
    assert grey[:top, left:left + 200].min() < DARK  # the title
    below = round(top + frame.y(0) + 20)
    assert grey[below:, left:left + frame.width].min() < DARK  # stem n = t - s
    assert grey[top:top + frame.height, :left].min() < DARK  # filtration s


def test_shaded_rectangle_chart_with_negative_stems_renders(tmp_path):
    dims = {(-2, 0): 1, (-2, 1): 2, (0, 0): 3, (1, 1): 5, (3, 2): 13, (2, 3): 1}
    products = [Product("h0", (-2, 0, 0), (-2, 1, 1)), Product("h1", (0, 0, 2), (1, 1, 4))]
    chart = Chart("M", 2, "standard", 8, 4, -2, rows_rectangle(8, 4), dims, products)
    text = to_svg(chart)
    check_pixels(chart, text, render(text, tmp_path))


def test_the_canvas_fits_the_drawing(tmp_path):
    """The document is as large as what it draws, as Chromium lays it out: nothing outside it, and no more than a
    few pixels of blank beyond the drawing on any side, whether the grid, the title or the legend is the widest."""
    from charts.motivic_svg import MotivicChart, MotivicDot, to_motivic_svg
    from tests.browser import Chromium
    from tests.test_charts_svg import dense_chart

    find_browser()
    narrow = Chart("a module with a long name", 2, "standard", 4, 2, 0, rows_rectangle(4, 2), {(0, 0): 1})
    dots = [MotivicDot(0, 0, 0, 0, None), MotivicDot(0, 1, 1, 0, 1), MotivicDot(1, 1, 2, 0, None), MotivicDot(3, 2, 5, 0, 2)]
    motivic = MotivicChart("M", 12, 3, 0, dots, [("h0", 0, 1, 0), ("h1", 0, 2, 1)])
    documents = {"S_2's shape": to_svg(dense_chart(40, 15)), "title widest": to_svg(narrow),
                 "motivic legend widest": to_motivic_svg(motivic)}
    with Chromium(tmp_path / "profile", 1400, 900) as browser:
        for name, text in documents.items():
            path = tmp_path / "chart.svg"
            path.write_text(text, encoding="utf-8")
            browser.open(path.as_uri())
            width, height, x, y, w, h = browser.evaluate(
                "(() => { const r = document.documentElement, b = r.getBBox(); return [+r.getAttribute('width'), "
                "+r.getAttribute('height'), b.x, b.y, b.width, b.height]; })()")
            assert 0 <= x <= 12 and 0 <= y <= 12, (name, x, y)
            assert 0 <= width - (x + w) <= 12 and 0 <= height - (y + h) <= 12, (name, width, height, x + w, y + h)
