"""Render our SVG with a real browser (headless Chromium) and look at the pixels: dots where the chart has
classes, nothing dark in the cells where it has none. Skipped, with the reason, when no Chromium is installed."""
from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from charts.model import Chart, Product, rows_rectangle
from charts.svg import chart_frame, parse_svg, to_svg
from tests.browser import browser_path, no_browser_reason

DATA = Path(__file__).parent / "data" / "sseq"
DARK, LIGHT = 100, 150  # grey levels: a dot's centre is nearly black; grid lines and shading stay above LIGHT


def find_browser() -> str:
    path = browser_path()
    if path is None:
        pytest.skip(no_browser_reason())
    return path


def render(svg_text: str, width: int, height: int, tmp_path: Path) -> np.ndarray:
    """The SVG as a (height, width) array of grey levels 0..255, at one CSS pixel per device pixel.

    The window is made larger than the chart and the screenshot cropped: headless Chromium shows less than
    --window-size asks for when the window is small, and the SVG sits at the top left of the page either way.
    """
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
    rgb = decode_png(png.read_bytes())[:height, :width, :3]
    return rgb.mean(axis=2)


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


def check_pixels(chart: Chart, grey: np.ndarray) -> None:
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
    frame = chart_frame(chart)
    grey = render(to_svg(chart), frame.width, frame.height, tmp_path)
    check_pixels(chart, grey)


def test_shaded_rectangle_chart_with_negative_stems_renders(tmp_path):
    dims = {(-2, 0): 1, (-2, 1): 2, (0, 0): 3, (1, 1): 5, (3, 2): 13, (2, 3): 1}
    products = [Product("h0", (-2, 0, 0), (-2, 1, 1)), Product("h1", (0, 0, 2), (1, 1, 4))]
    chart = Chart("M", 2, "standard", 8, 4, -2, rows_rectangle(8, 4), dims, products)
    frame = chart_frame(chart)
    grey = render(to_svg(chart), frame.width, frame.height, tmp_path)
    check_pixels(chart, grey)
