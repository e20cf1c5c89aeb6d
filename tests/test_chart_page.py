"""The interactive page in headless Chromium, opened from a file:// URL with the network off: a dot for every class
where charts.geometry puts it, tooltips naming the class and its products, toggles that hide exactly one kind of
line, axes that follow the zoom, d2 lines and an E3 page only when d2 is known; no console error, no request
beyond the file. Skipped, with the reason, when no Chromium is installed."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from charts.geometry import GRID
from charts.html import notebook_html, to_html
from charts.model import Chart, Differential, Product, rows_rectangle, rows_through_stem
from charts.svg import chart_frame, parse_svg
from tests.browser import Chromium, browser_path, no_browser_reason
from tests.test_charts_render import decode_png
from tests.test_charts_svg import dense_chart

DATA = Path(__file__).parent / "data" / "sseq"
DARK, LIGHT = 150, 185  # grey 0..255: dots and lines (black, or a colour) below DARK; background and grid above
WIDTH, HEIGHT = 1000, 640

pytestmark = pytest.mark.skipif(browser_path() is None, reason=no_browser_reason())


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile"), WIDTH, HEIGHT) as b:
        yield b


def reference_chart() -> Chart:
    """sseq's own S_2 chart through stem 20, s <= 8: 60 classes, h0..h3 lines."""
    return parse_svg((DATA / "chart").read_text(encoding="utf-8").split("\n", 1)[1], "S_2")


def d2_chart() -> Chart:
    """A made-up chart with d2: x_(5,0,0) -> x_(4,2,1) and x_(5,1,0) -> x_(4,3,0) + x_(4,3,1)."""
    dims = {(0, 0): 1, (0, 1): 1, (5, 0): 1, (5, 1): 1, (4, 2): 2, (4, 3): 2, (1, 1): 1}
    products = [Product("h0", (0, 0, 0), (0, 1, 0)), Product("h1", (0, 0, 0), (1, 1, 0)),
                Product("h0", (5, 0, 0), (5, 1, 0)), Product("h0", (4, 2, 0), (4, 3, 0)),
                Product("h0", (4, 2, 1), (4, 3, 1))]
    d2 = [Differential((5, 0, 0), (4, 2, 1)), Differential((5, 1, 0), (4, 3, 0)),
          Differential((5, 1, 0), (4, 3, 1))]
    return Chart("M", 2, "standard", 6, 4, 0, rows_through_stem(6, 4), dims, products, d2=d2)


class Page:
    """A chart's page open in the browser, with the view the script chose, to place things on the screen."""

    def __init__(self, browser: Chromium, chart: Chart | None, tmp_path: Path, html: str | None = None) -> None:
        """Open to_html(chart), or the page `html` (then chart may be None: dots() needs it)."""
        path = tmp_path / "chart.html"
        path.write_text(to_html(chart) if html is None else html, encoding="utf-8")
        self.browser, self.chart, self.url = browser, chart, path.as_uri()
        self.since = len(browser.events)
        browser.open(self.url)
        self.settle()

    def settle(self) -> None:
        """Wait for the frame that the last input scheduled, then read the view again."""
        self.browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        view = self.browser.evaluate("nassauChart.view()")
        self.scale, self.ox, self.oy = view["scale"], view["ox"], view["oy"]
        self.left, self.top = self.browser.evaluate(
            "(() => { const r = document.getElementById('chart').getBoundingClientRect(); return [r.left, r.top] })()")

    def on_canvas(self, x: float, y: float) -> tuple[float, float]:
        """Chart units (the SVG's) to CSS pixels of the canvas."""
        return x * self.scale + self.ox, y * self.scale + self.oy

    def on_page(self, x: float, y: float) -> tuple[float, float]:
        cx, cy = self.on_canvas(x, y)
        return cx + self.left, cy + self.top

    def dots(self) -> dict[tuple[int, int, int], tuple[float, float]]:
        """Where each class should be drawn, in chart units, by the SVG's geometry."""
        frame = chart_frame(self.chart)
        return {(n, s, i): xy for n, s in self.chart.nonzero_bidegrees()
                for i, xy in enumerate(frame.dots(n, s, self.chart.dim(n, s))[1])}

    def greys(self, points: list[tuple[float, float]], reach: int = 1,
              canvas: str = "document.getElementById('chart')") -> list[float]:
        """The darkest grey (over white) within `reach` pixels of each canvas point, read from the canvas."""
        pts = [[round(x), round(y)] for x, y in points]
        return self.browser.evaluate(f"""(() => {{
            const c = {canvas}, copy = document.createElement('canvas');
            [copy.width, copy.height] = [c.width, c.height];
            const g = copy.getContext('2d', {{willReadFrequently: true}});  // a copy: the page's canvas is not read
            g.drawImage(c, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data;
            return {pts}.map(([x, y]) => {{
                let m = 255;
                for (let dy = -{reach}; dy <= {reach}; dy++) for (let dx = -{reach}; dx <= {reach}; dx++) {{
                    const i = ((y + dy) * c.width + x + dx) * 4, a = d[i + 3] / 255;
                    m = Math.min(m, (d[i] + d[i + 1] + d[i + 2]) / 3 * a + 255 * (1 - a));
                }}
                return m;
            }});
        }})()""")

    def tooltip(self, x: float, y: float) -> list[str]:
        """The tooltip's lines with the pointer at chart point (x, y); [] when hidden."""
        self.browser.mouse("mouseMoved", *self.on_page(x, y))
        return self.browser.evaluate(
            "(() => { const t = document.getElementById('tooltip'); return t.hidden ? [] : "
            "[...t.children].map(c => c.textContent) })()")

    def click(self, selector: str) -> None:
        box = self.browser.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()")
        self.browser.click(*box)
        self.settle()

    def axis(self, which: str) -> list[tuple[int, float]]:
        """(label, centre in canvas pixels along the axis) of every label of the x or y axis."""
        return [(int(text), pos) for text, pos in self.browser.evaluate(f"""(() => {{
            const c = document.getElementById('chart').getBoundingClientRect();
            return [...document.querySelectorAll('#{which}-axis span')].map(e => {{
                const r = e.getBoundingClientRect();
                return [e.textContent,
                        '{which}' === 'x' ? (r.left + r.right) / 2 - c.left : (r.top + r.bottom) / 2 - c.top];
            }});
        }})()""")]

    def assert_clean(self) -> None:
        """No console error or exception, and nothing asked for but the page's own file."""
        assert self.browser.errors(self.since) == []
        assert set(self.browser.requests(self.since)) == {self.url}


def expected_lines(chart: Chart, g: tuple[int, int, int]) -> set[str]:
    """The product lines a tooltip on g should show: op x = (sum of op x's targets) for every op x out of or into g."""
    name = lambda c: f"x_({c[0]}, {c[1]}, {c[2]})"  # noqa: E731
    targets: dict[tuple[str, tuple], list] = {}
    for p in chart.products:
        targets.setdefault((p.op, p.source), []).append(p.target)
    lines = set()
    for (op, source), ts in targets.items():
        if source == g or g in ts:
            lines.add(f"{op} · {name(source)} = " + " + ".join(name(t) for t in sorted(ts)))
    return lines


def test_every_class_is_a_dot_where_the_geometry_puts_it(browser, tmp_path):
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    dots = page.dots()
    assert len(dots) == 60
    assert all(g < DARK for g in page.greys([page.on_canvas(*xy) for xy in dots.values()]))
    frame = chart_frame(chart)
    # Off the grid lines (two major ones crossing are darker than LIGHT) but inside where a lone dot would be.
    empty = [(frame.x(n) + 1.5, frame.y(s) - 1.5) for n in range(frame.min_n, frame.max_n + 1)
             for s in range(frame.max_s + 1) if not chart.dim(n, s)]
    assert all(g > LIGHT for g in page.greys([page.on_canvas(*xy) for xy in empty], reach=0))
    page.assert_clean()


def test_the_screen_shows_the_dots(browser, tmp_path):
    """What reaches the screen, not only the canvas: a screenshot of the chart's frame, as test_charts_render."""
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    frame = chart_frame(chart)
    x0, y0 = page.on_page(0, 0)
    w, h = math.ceil(frame.width * page.scale), math.ceil(frame.height * page.scale)
    grey = decode_png(browser.screenshot(x0, y0, w, h))[:, :, :3].mean(axis=2)
    for x, y in page.dots().values():
        px, py = round(x * page.scale), round(y * page.scale)
        assert grey[py - 1:py + 2, px - 1:px + 2].min() < DARK, f"no dot at {(x, y)}"
    empty = [(n, s) for n in range(frame.min_n, frame.max_n + 1) for s in range(frame.max_s + 1) if not chart.dim(n, s)]
    for n, s in empty:
        assert grey[round(frame.y(s) * page.scale), round(frame.x(n) * page.scale)] > LIGHT
    assert np.median(grey) > 240  # a white page, not a blank dark one


def test_tooltips_name_each_class_its_bidegree_and_its_products(browser, tmp_path):
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    for (n, s, i), xy in page.dots().items():
        lines = page.tooltip(*xy)
        assert lines[:2] == [f"x_({n}, {s}, {i})", f"stem {n}, s = {s}, t = {n + s}"]
        assert set(lines[2:]) == expected_lines(chart, (n, s, i)) and len(lines[2:]) == len(set(lines[2:]))
    assert "h1 · x_(0, 0, 0) = x_(1, 1, 0)" in page.tooltip(*page.dots()[(1, 1, 0)])
    assert page.tooltip(chart_frame(chart).x(5), chart_frame(chart).y(5)) == []  # an empty cell
    page.assert_clean()


def segment_distance(p, a, b) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def test_toggling_h1_hides_exactly_the_h1_lines(browser, tmp_path):
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    dots = page.dots()
    segments = [(p.op, page.on_canvas(*dots[p.source]), page.on_canvas(*dots[p.target])) for p in chart.products]
    dot_px = [page.on_canvas(*xy) for xy in dots.values()]
    probes: dict[str, list] = {}
    for op, a, b in segments:  # each line's midpoint, where no other line and no dot is near
        mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
        if all(segment_distance(mid, c, d) > 4 for o, c, d in segments if (o, c, d) != (op, a, b)) and \
                all(math.dist(mid, d) > 8 for d in dot_px):
            probes.setdefault(op, []).append(mid)
    assert set(probes) == {"h0", "h1", "h2", "h3"} and len(probes["h1"]) >= 5
    drawn = browser.evaluate("nassauChart.stats.drawnLines")
    assert drawn == {op: sum(p.op == op for p in chart.products) for op in ("h0", "h1", "h2", "h3")}
    for op, points in probes.items():
        assert all(g < DARK for g in page.greys(points)), op
    page.click("input[data-op='h1']")
    for op, points in probes.items():
        greys = page.greys(points)
        assert all(g > LIGHT for g in greys) if op == "h1" else all(g < DARK for g in greys), op
    assert browser.evaluate("nassauChart.stats.drawnLines") == {op: k for op, k in drawn.items() if op != "h1"}
    page.click("input[data-op='h1']")
    assert all(g < DARK for g in page.greys(probes["h1"]))
    page.assert_clean()


def test_zoom_and_pan_move_the_axes_with_the_chart(browser, tmp_path):
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    frame = chart_frame(chart)

    def check_axes() -> list[int]:
        stems = page.axis("x")
        for n, x in stems:
            assert abs(x - page.on_canvas(frame.x(n), 0)[0]) < 1.5, (n, x)
        for s, y in page.axis("y"):
            assert abs(y - page.on_canvas(0, frame.y(s))[1]) < 1.5, (s, y)
        return [n for n, _ in stems]

    before = check_axes()
    assert before[0] == 0 and before[-1] == 20
    assert browser.evaluate("nassauChart.visibleStems()") == [0, 20]
    browser.mouse("mouseWheel", *page.on_page(frame.x(10), frame.y(4)), deltaX=0, deltaY=-800)
    page.settle()
    zoomed = check_axes()
    low, high = browser.evaluate("nassauChart.visibleStems()")
    assert 0 < low <= 10 <= high < 20 and zoomed[0] >= low and zoomed[-1] <= high
    assert zoomed[1] - zoomed[0] <= before[1] - before[0]  # labels at least as dense
    start = page.on_page(frame.x(10), frame.y(4))
    browser.mouse("mousePressed", *start, button="left", clickCount=1)
    browser.mouse("mouseMoved", start[0] + 300, start[1], button="left", buttons=1)
    browser.mouse("mouseReleased", start[0] + 300, start[1], button="left", clickCount=1)
    page.settle()
    panned = browser.evaluate("nassauChart.visibleStems()")
    assert panned[0] < low and panned[1] < high  # dragging right brings lower stems into view
    check_axes()
    page.click("#zoom-fit")
    assert check_axes() == before
    page.assert_clean()


def test_the_fitted_chart_sits_on_its_axes_which_have_titles(browser, tmp_path):
    """A chart wider than the window's shape: its s = 0 row sits just above the stem numbers and its first stem just
    right of the filtration numbers (within the reach of a cell's dots and a few pixels; the spare room goes below
    the axis title), and both axes say what they count."""
    chart = reference_chart()
    page = Page(browser, chart, tmp_path)
    frame = chart_frame(chart)
    _, row0 = page.on_page(0, frame.y(0))
    column0, _ = page.on_page(frame.x(frame.min_n), 0)
    box = lambda selector: browser.evaluate(  # noqa: E731
        f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect(); "
        "return [r.left, r.top, r.right, r.bottom] })()")
    stem_labels_top = min(box(f"#x-axis span:nth-child({k + 1})")[1] for k in range(len(page.axis("x"))))
    near = 16 + 0.4 * GRID * page.scale
    assert 0 < stem_labels_top - row0 <= near
    assert 0 < column0 - box("#y-axis")[2] <= near
    titles = browser.evaluate("[...document.querySelectorAll('.axis-title')].map(e => e.textContent)")
    assert titles == ["filtration s", "stem n = t \u2212 s"]
    x_title, y_title = box("#x-title"), box("#y-title")
    assert x_title[1] >= stem_labels_top and x_title[3] <= HEIGHT  # under the stem numbers, on the screen
    assert y_title[2] <= box("#y-axis")[0] and y_title[3] - y_title[1] > y_title[2] - y_title[0]  # upright
    page.assert_clean()


def test_d2_lines_and_the_e3_page_appear_when_d2_is_known(browser, tmp_path):
    chart = d2_chart()
    page = Page(browser, chart, tmp_path)
    assert browser.evaluate("[...document.querySelectorAll('#pages input')].map(e => e.value)") == ["E2", "E3"]
    assert browser.evaluate("[...document.querySelectorAll('#toggles input')].map(e => e.dataset.op)") == [
        "h0", "h1", "d2"]
    assert browser.evaluate("nassauChart.stats.drawnLines.d2") == 3
    dots = page.dots()
    d2_mid = [(a + b) / 2 for a, b in zip(dots[(5, 0, 0)], dots[(4, 2, 1)])]
    assert page.greys([page.on_canvas(*d2_mid)])[0] < DARK
    assert "d2 x_(5, 1, 0) = x_(4, 3, 0) + x_(4, 3, 1)" in page.tooltip(*dots[(4, 3, 1)])
    page.click("input[data-op='d2']")
    assert page.greys([page.on_canvas(*d2_mid)])[0] > LIGHT
    page.click("input[value='E3']")
    assert browser.evaluate("nassauChart.page()") == "E3"
    frame = chart_frame(chart)
    gone = [(5, 0), (5, 1)]  # sources of d2; (4, 2) and (4, 3) keep one class each
    assert all(g > LIGHT for g in page.greys([page.on_canvas(frame.x(n), frame.y(s)) for n, s in gone], reach=3))
    one = lambda n, s: (frame.x(n), frame.y(s))  # noqa: E731  (a lone class sits at the cell's centre)
    assert all(g < DARK for g in page.greys([page.on_canvas(*one(n, s)) for n, s in [(0, 0), (4, 2), (4, 3)]]))
    assert page.tooltip(*one(4, 2))[:2] == ["x_(4, 2, 0)", "stem 4, s = 2, t = 6 (E3)"]
    assert page.tooltip(*one(4, 3))[0] == "x_(4, 3, 0)"
    assert browser.evaluate("nassauChart.stats.drawnLines") == {"h0": 2, "h1": 1}
    page.assert_clean()


def test_the_e3_page_opens_on_e3_with_e2_and_its_d2_beside_it(browser, tmp_path):
    """`--page 3 --html`: the page opens on E3 (its radio checked, E3's classes drawn), and the switch brings E2 with
    its d2 lines and their checkbox."""
    chart = d2_chart()
    page = Page(browser, None, tmp_path, html=to_html(chart, show="E3"))
    assert browser.evaluate("nassauChart.page()") == "E3"
    assert browser.evaluate("[...document.querySelectorAll('#pages input')].map(e => [e.value, e.checked])") == [
        ["E2", False], ["E3", True]]
    assert "d2" in browser.evaluate("[...document.querySelectorAll('#toggles input')].map(e => e.dataset.op)")
    assert browser.evaluate("document.getElementById('title').textContent").startswith("E2 and E3 charts of M")
    assert browser.evaluate("nassauChart.stats.drawnLines") == {"h0": 2, "h1": 1}  # E3's: no d2
    page.click("input[value='E2']")
    assert browser.evaluate("nassauChart.page()") == "E2" and browser.evaluate("nassauChart.stats.drawnLines.d2") == 3
    page.assert_clean()


def test_without_d2_there_is_no_page_switch_and_no_d2_toggle(browser, tmp_path):
    Page(browser, reference_chart(), tmp_path)
    assert browser.evaluate("document.querySelectorAll('#pages input').length") == 0
    assert browser.evaluate("[...document.querySelectorAll('#toggles input')].map(e => e.dataset.op)") == [
        "h0", "h1", "h2", "h3"]


def test_the_request_log_sees_a_page_that_reaches_out(browser, tmp_path):
    """The check behind assert_clean has teeth: a page asking for a remote image is caught, and it fails offline."""
    path = tmp_path / "leak.html"
    path.write_text('<!DOCTYPE html><link rel="icon" href="data:,"><img src="http://example.com/x.png">')
    since = len(browser.events)
    browser.open(path.as_uri())
    assert "http://example.com/x.png" in browser.requests(since)


def test_the_notebook_frame_runs_the_page(browser, tmp_path):
    """_repr_html_'s iframe (srcdoc, scripts sandboxed): the escaped page parses, runs and draws its dots."""
    path = tmp_path / "cell.html"
    path.write_text('<!DOCTYPE html><link rel="icon" href="data:,"><body style="margin: 0">'
                    + notebook_html(reference_chart()) + "</body>", encoding="utf-8")
    since = len(browser.events)
    browser.open(path.as_uri())
    for _ in range(20):  # the frame draws on its own schedule: look again until it has (a busy machine is slow)
        grey = decode_png(browser.screenshot(0, 0, WIDTH, 520))[:, :, :3].mean(axis=2)
        dark = (grey[60:490, 50:WIDTH - 10] < 60).sum()  # below the header's text, right of the axis labels
        if dark > 60 * 4:  # at least the 60 dots (a blank or broken frame has none)
            break
        browser.evaluate("new Promise(r => setTimeout(r, 250))")
    assert dark > 60 * 4
    assert browser.errors(since) == []


def test_a_heavy_chart_zooms_a_snapshot_then_redraws_every_dot(browser, tmp_path):
    """Thousands of dots and lines: a wheel frame moves the last frame's picture (no redraw), and once the wheel
    pauses the chart is redrawn at the new view with every visible class where it belongs."""
    chart = dense_chart(40, 24)
    page = Page(browser, chart, tmp_path)
    total = len(page.dots())
    frame = chart_frame(chart)
    w, h = browser.evaluate(
        "[document.getElementById('chart').clientWidth, document.getElementById('chart').clientHeight]")

    def shown() -> list[tuple[float, float]]:
        return [p for xy in page.dots().values() if 3 < (p := page.on_canvas(*xy))[0] < w - 3 and 3 < p[1] < h - 3]

    # The wheel, then the frame it asked for, read in that same frame (before the redraw's timer can run).
    x, y = page.on_page(frame.x(20), frame.y(12))
    quick = browser.evaluate(f"""(async () => {{
        document.getElementById('chart').dispatchEvent(new WheelEvent('wheel', {{deltaY: -400, clientX: {x},
            clientY: {y}, bubbles: true, cancelable: true}}));
        await new Promise(r => requestAnimationFrame(r));
        const copy = document.createElement('canvas'), c = document.getElementById('chart');
        [copy.width, copy.height] = [c.width, c.height];
        copy.getContext('2d').drawImage(c, 0, 0);
        window.quickFrame = copy;
        return [nassauChart.stats.quickFrames, nassauChart.stats.drawnDots];
    }})()""")
    assert quick == [1, total]  # no redraw: the last full frame (the whole chart) was moved
    page.settle()
    assert max(page.greys(shown(), canvas="window.quickFrame")) < DARK  # the moved picture had the dots in place
    browser.evaluate("new Promise(r => setTimeout(r, 400))")
    page.settle()
    low, high = browser.evaluate("nassauChart.visibleStems()")
    assert 0 < low < 20 < high < 40
    assert 300 < len(shown()) < total / 2 and max(page.greys(shown())) < DARK
    drawn = browser.evaluate("[nassauChart.stats.quickFrames, nassauChart.stats.drawnDots]")
    assert drawn[0] == 1 and drawn[1] < total / 2  # redrawn, only what is in view
    page.assert_clean()


def test_negative_stems_a_crowded_bidegree_and_a_rectangle(browser, tmp_path):
    """The SVG render test's chart: stems from -2, 13 classes on one dot (with its count), rows that end early."""
    dims = {(-2, 0): 1, (-2, 1): 2, (0, 0): 3, (1, 1): 5, (3, 2): 13, (2, 3): 1}
    products = [Product("h0", (-2, 0, 0), (-2, 1, 1)), Product("h1", (0, 0, 2), (1, 1, 4))]
    chart = Chart("M", 2, "standard", 8, 4, -2, rows_rectangle(8, 4), dims, products)
    page = Page(browser, chart, tmp_path)
    assert max(page.greys([page.on_canvas(*xy) for xy in page.dots().values()])) < DARK
    assert [n for n, _ in page.axis("x")][0] == -2
    frame = chart_frame(chart)
    crowded = page.tooltip(frame.x(3), frame.y(2))
    assert crowded[0] == "13 classes: " + ", ".join(f"x_(3, 2, {i})" for i in range(13))
    assert page.tooltip(frame.x(-2), frame.y(0))[2:] == ["h0 · x_(-2, 0, 0) = x_(-2, 1, 1)"]
    page.assert_clean()


def test_the_cells_beyond_each_row_are_shaded_and_no_others(browser, tmp_path):
    """Rows of a rectangle t <= 8 end at stem 8 - s: a little left of each row's boundary (its last computed cell)
    the canvas is white, a little right of it (the first cell not computed) it is the 6% grey the SVG uses too. The
    same points through stem 8, where every row is computed, are all white. Samples stay off grid lines and dots."""
    shaded = 255 * 0.94
    greys = {}
    for name, rows in (("rectangle", rows_rectangle(8, 4)), ("through stem", rows_through_stem(8, 4))):
        chart = Chart("M", 2, "standard", 8, 4, 0, rows, {(0, 0): 1})
        page, frame = Page(browser, chart, tmp_path), chart_frame(chart)
        points = [(frame.x(8 - s + dx), frame.y(s + 0.3)) for s in range(1, 5) for dx in (-0.3, 0.3, 0.7)]
        greys[name] = page.greys([page.on_canvas(*xy) for xy in points], reach=0)
        page.assert_clean()
    for k, (grey, white) in enumerate(zip(greys["rectangle"], greys["through stem"], strict=True)):
        assert white > 250, (k, white)
        if k % 3 == 2:  # right of the boundary: not computed in the rectangle
            assert abs(grey - shaded) < 4, (k, grey)
        else:
            assert grey > 250, (k, grey)


# -- the frame: the fitted chart fills the room it has, at any size, and follows a resize ----------------------------

#: In the document it runs in: every class's dot, every axis label and both axis titles where the screen shows them
#: (inside the canvas or its axis, inside the plot, inside the window), the stem labels just under the s = 0 row and
#: no blank band between the bar and the top row. Returns what is wrong, [] when nothing.
FRAME_PROBLEMS = """(() => {
    const problems = [], data = JSON.parse(document.getElementById('chart-data').textContent);
    const P = data.pages[0], v = nassauChart.view(), rect = (e) => e.getBoundingClientRect();
    const canvas = rect(document.getElementById('chart')), plot = rect(document.getElementById('plot'));
    const screen = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
    const within = (r, box) => r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5 &&
        r.bottom <= box.bottom + 0.5;
    if (!(canvas.width > 0 && canvas.height > 0)) problems.push('no canvas');
    for (let k = 0; k < P.classes.length / 3; k++) {
        const x = canvas.left + P.xyr[3 * k] * v.scale + v.ox, y = canvas.top + P.xyr[3 * k + 1] * v.scale + v.oy;
        const dot = {left: x, right: x, top: y, bottom: y};
        if (!within(dot, canvas) || !within(dot, screen))
            problems.push('dot of (' + P.classes[3 * k] + ', ' + P.classes[3 * k + 1] + ') off screen');
    }
    const labels = {};
    for (const axis of ['x', 'y']) {
        const box = rect(document.getElementById(axis + '-axis'));
        labels[axis] = [...document.querySelectorAll('#' + axis + '-axis span')];
        for (const label of labels[axis])
            if (!within(rect(label), box) || !within(rect(label), plot) || !within(rect(label), screen))
                problems.push(axis + ' label ' + label.textContent + ' cut off');
    }
    for (const title of document.querySelectorAll('.axis-title'))
        if (!within(rect(title), plot) || !within(rect(title), screen)) problems.push(title.id + ' cut off');
    const ys = labels.y.map((e) => +e.textContent), xs = labels.x.map((e) => +e.textContent);
    if (!ys.includes(0) || Math.max(...ys) < data.frame.max_s / 2) problems.push('filtration labels ' + ys);
    if (!xs.includes(data.frame.min_n) || Math.max(...xs) < data.frame.max_n / 2) problems.push('stem labels ' + xs);
    const row = (s) => canvas.top + (data.frame.margin + (data.frame.max_s - s) * data.frame.grid) * v.scale + v.oy;
    const near = 16 + 0.4 * data.frame.grid * v.scale;  // CSS pixels: the reach of a cell's dots and a little
    const below = Math.min(...labels.x.map((e) => rect(e).top)) - row(0), above = row(data.frame.max_s) - canvas.top;
    if (!(below > 0 && below <= near)) problems.push('stem labels ' + below + ' px below the s = 0 row');
    if (!(above > 0 && above <= near)) problems.push('the top row ' + above + ' px under the bar');
    return problems;
})()"""


def frame_problems(browser: Chromium, context: int | None = None) -> list[str]:
    """FRAME_PROBLEMS in the page (or in the execution context `context`: the notebook's frame), once the chart has
    drawn every class (a frame that has not drawn within a few seconds is a problem too)."""
    extra = {} if context is None else {"contextId": context}
    for _ in range(40):
        result = browser.call("Runtime.evaluate", expression="new Promise(r => requestAnimationFrame(() => "
                              "requestAnimationFrame(() => r(nassauChart.stats.firstFrame !== null))))",
                              returnByValue=True, awaitPromise=True, **extra)
        if result["result"].get("value"):
            break
        browser.evaluate("new Promise(r => setTimeout(r, 100))")
    else:
        return ["never drawn"]
    return browser.call("Runtime.evaluate", expression=FRAME_PROBLEMS, returnByValue=True, **extra)["result"]["value"]


def window_size(browser: Chromium, width: int, height: int) -> None:
    browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)


def frame_charts() -> list[Chart]:
    """The README's chart's shape (stems 0..40, s <= 15), a wide one (sseq's through stem 20) and a tall one."""
    return [dense_chart(40, 15), reference_chart(), dense_chart(12, 24, seed=1)]


@pytest.mark.parametrize("size, resized", [((1400, 900), (900, 500)), ((1200, 520), (1400, 900)),
                                           ((800, 600), (1200, 520))])
def test_the_chart_fits_the_window_on_load_and_after_a_resize(browser, tmp_path, size, resized):
    """Every row's dots and every axis label on the screen, the stem labels under the s = 0 row, no blank band
    above the chart: when the page opens, and again once the window has changed size (no `fit` pressed)."""
    try:
        for chart in frame_charts():
            window_size(browser, *size)
            page = Page(browser, chart, tmp_path)
            assert frame_problems(browser) == [], (chart.module, size)
            window_size(browser, *resized)
            assert frame_problems(browser) == [], (chart.module, size, resized)
            page.assert_clean()
    finally:
        window_size(browser, WIDTH, HEIGHT)


def test_the_chart_fits_the_notebook_frame_on_load_and_after_a_resize(browser, tmp_path):
    """_repr_html_'s 520 px iframe in a 1000 px wide window: drawn when the frame gets its size, and every dot and
    label inside the frame, before and after the window narrows."""
    try:
        for chart in frame_charts():
            window_size(browser, 1000, 600)
            path = tmp_path / "cell.html"
            path.write_text('<!DOCTYPE html><link rel="icon" href="data:,"><body style="margin: 8px">'
                            + notebook_html(chart) + "</body>", encoding="utf-8")
            since = len(browser.events)
            browser.open(path.as_uri())
            child = browser.call("Page.getFrameTree")["frameTree"]["childFrames"][0]["frame"]["id"]
            browser.evaluate("new Promise(r => setTimeout(r, 50))")  # the frame's context is announced
            context = next(e["params"]["context"]["id"] for e in reversed(browser.events[since:])
                           if e["method"] == "Runtime.executionContextCreated"
                           and e["params"]["context"]["auxData"].get("frameId") == child
                           and e["params"]["context"]["auxData"].get("isDefault"))
            assert frame_problems(browser, context) == [], chart.module
            window_size(browser, 640, 600)
            assert frame_problems(browser, context) == [], chart.module
            assert browser.errors(since) == []
    finally:
        window_size(browser, WIDTH, HEIGHT)
