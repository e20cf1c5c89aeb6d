"""The interactive C-motivic page (charts.motivic_page): the classical page's script with the motivic data. Its data
without a browser, then in headless Chromium (file:// URL, network off, as tests/test_chart_page.py): every
generator a dot where the SVG puts it, in its torsion's colour (Isaksen's style: tau-free black, tau^k-torsion
coloured); tooltips with (stem, s, weight), the torsion and the products as sums of tau^k y; the h_i toggles; the
dashed lines exactly the products that are tau^k (k >= 1) times their target; the legend; zoom; no console error and
no request beyond the file. The browser tests skip, with the reason, when no Chromium is installed."""
from __future__ import annotations

import html
import json
import re

import pytest

import nassau
from charts.motivic_page import motivic_page_data
from charts.motivic_svg import LINE_OPS, MotivicChart, motivic_frame, placement, torsion_colour, torsion_name
from tests.browser import Chromium, browser_path, no_browser_reason
from tests.test_chart_page import DARK, HEIGHT, WIDTH, Page

needs_browser = pytest.mark.skipif(browser_path() is None, reason=no_browser_reason())


@pytest.fixture(scope="module")
def chart() -> MotivicChart:
    """S_2 through stem 20, s <= 10: tau-free and tau^1-torsion classes, h0 h1 h2 lines, some of them tau times
    their target (h0^2 h2 = tau h1^3)."""
    return nassau.resolve("S_2", stem=20, max_s=10, motivic=True, progress=False).motivic_chart()


def label(chart: MotivicChart, k: int) -> str:
    """(stem, s, weight)[index], the name docs/motivic.md gives a generator."""
    d = chart.dots[k]
    return f"({d.stem}, {d.s}, {d.weight})[{d.index}]"


def expected_products(chart: MotivicChart, k: int) -> set[str]:
    """op · x = sum of tau^j y, for every product line out of or into dot k."""
    targets: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for op, a, b, power in chart.lines:
        targets.setdefault((op, a), []).append((b, power))
    tau = lambda j: "" if j == 0 else "tau " if j == 1 else f"tau^{j} "  # noqa: E731
    return {f"{op} · {label(chart, a)} = " + " + ".join(tau(j) + label(chart, b) for b, j in ts)
            for (op, a), ts in targets.items() if a == k or any(b == k for b, _ in ts)}


def test_the_page_data_carries_weights_torsion_and_powers(chart: MotivicChart) -> None:
    data = motivic_page_data(chart)
    (page,) = data["pages"]
    assert len(page["classes"]) == 3 * len(chart.dots)
    assert page["labels"] == [label(chart, k) for k in range(len(chart.dots))]
    assert page["colors"] == [torsion_colour(d.torsion) for d in chart.dots]
    assert page["notes"][0] == "weight 0, tau-free"
    for op in LINE_OPS:
        ours = [(a, b, k) for o, a, b, k in chart.lines if o == op]
        assert page["lines"][op] == [i for a, b, _ in ours for i in (a, b)]
        assert page["powers"][op] == [k for _, _, k in ours]
    assert any(page["powers"]["h2"]) and any(k == 0 for k in page["powers"]["h2"])
    assert [e["name"] for e in data["legend"]] == ["tau-free", "tau^1-torsion"]
    place, _ = placement(chart, motivic_frame(chart))
    assert [tuple(page["xyr"][3 * k:3 * k + 2]) for k in range(len(chart.dots))] == \
        [tuple(round(v, 2) for v in place[k]) for k in range(len(chart.dots))]


def test_the_cli_writes_the_interactive_page(tmp_path) -> None:
    from tests.test_motivic_cli import run_cli

    page = tmp_path / "m.html"
    out = run_cli("resolve", "S_2", "--motivic", "--stem", "12", "--max-s", "6", "--html", str(page), "--quiet")
    assert out.returncode == 0
    text = page.read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', text, re.S).group(1))
    labels = data["pages"][0]["labels"]
    k = labels.index("(4, 4, 4)[0]")
    assert data["pages"][0]["colors"][k] == torsion_colour(1) and data["pages"][0]["notes"][k].endswith("torsion")
    assert "nassauChart" in text and "http://" not in text and "https://" not in text


def test_a_notebook_shows_the_page_in_a_frame() -> None:
    run = nassau.resolve("S_2", stem=8, max_s=4, motivic=True, progress=False)
    frame = run._repr_html_()
    page = re.fullmatch(r'<iframe srcdoc="(.*)" style="[^"]*" sandbox="allow-scripts"></iframe>', frame, re.S)
    assert page is not None and html.unescape(page.group(1)) == run.html()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if browser_path() is None:
        pytest.skip(no_browser_reason())
    with Chromium(tmp_path_factory.mktemp("profile"), WIDTH, HEIGHT) as b:
        yield b


def open_page(browser, chart: MotivicChart, tmp_path) -> tuple[Page, dict[int, tuple[float, float]]]:
    from charts.motivic_page import to_motivic_html

    page = Page(browser, None, tmp_path, html=to_motivic_html(chart))
    place, _ = placement(chart, motivic_frame(chart))
    return page, place


def colours_at(page: Page, points: list[tuple[float, float]]) -> list[list[int]]:
    """The canvas's RGB at each canvas point (a copy of the canvas is read, not the page's own)."""
    pts = [[round(x), round(y)] for x, y in points]
    return page.browser.evaluate(f"""(() => {{
        const c = document.getElementById('chart'), copy = document.createElement('canvas');
        [copy.width, copy.height] = [c.width, c.height];
        const g = copy.getContext('2d', {{willReadFrequently: true}});
        g.drawImage(c, 0, 0);
        return {pts}.map(([x, y]) => [...g.getImageData(x, y, 1, 1).data.slice(0, 3)]);
    }})()""")


def rgb(colour: str) -> list[int]:
    return [int(colour[i:i + 2], 16) for i in (1, 3, 5)]


@needs_browser
def test_every_generator_is_a_dot_in_its_torsion_colour(browser, chart, tmp_path):
    page, place = open_page(browser, chart, tmp_path)
    seen = colours_at(page, [page.on_canvas(*place[k]) for k in range(len(chart.dots))])
    for k, got in enumerate(seen):
        want = rgb(torsion_colour(chart.dots[k].torsion))
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 40, (label(chart, k), got, want)
    assert any(d.torsion for d in chart.dots) and any(d.torsion is None for d in chart.dots)
    page.assert_clean()


@needs_browser
def test_tooltips_give_stem_s_weight_torsion_and_products(browser, chart, tmp_path):
    page, place = open_page(browser, chart, tmp_path)
    for k, d in enumerate(chart.dots):
        lines = page.tooltip(*place[k])
        assert lines[:3] == [label(chart, k), f"stem {d.stem}, s = {d.s}, t = {d.stem + d.s}",
                             f"weight {d.weight}, {torsion_name(d.torsion)}"]
        assert set(lines[3:]) == expected_products(chart, k) and len(lines[3:]) == len(set(lines[3:]))
    h2 = [k for k, d in enumerate(chart.dots) if (d.stem, d.s, d.weight) == (3, 3, 3)][0]
    assert "h2 · (0, 2, 0)[0] = tau (3, 3, 3)[0]" in page.tooltip(*place[h2])  # h0^2 h2 = tau h1^3
    page.assert_clean()


@needs_browser
def test_dashed_lines_are_the_tau_multiples_and_toggles_hide_one_kind(browser, chart, tmp_path):
    page, _ = open_page(browser, chart, tmp_path)
    stats = lambda: browser.evaluate("nassauChart.stats")  # noqa: E731
    count = {op: sum(o == op for o, *_ in chart.lines) for op in LINE_OPS}
    dashed = {op: sum(o == op and k > 0 for o, _, _, k in chart.lines) for op in LINE_OPS}
    assert stats()["drawnLines"] == count and stats()["dashedLines"] == sum(dashed.values()) > 0
    page.click("input[data-op='h2']")
    assert stats()["drawnLines"] == {op: k for op, k in count.items() if op != "h2"}
    assert stats()["dashedLines"] == sum(dashed.values()) - dashed["h2"]
    page.click("input[data-op='h2']")
    assert stats()["drawnLines"] == count
    page.assert_clean()


@needs_browser
def test_the_legend_names_the_colours_and_zoom_works(browser, chart, tmp_path):
    page, place = open_page(browser, chart, tmp_path)
    legend = browser.evaluate("[...document.querySelectorAll('#legend > span')].map(e => [e.textContent, "
                              "e.querySelector('.dot') ? getComputedStyle(e.querySelector('.dot')).backgroundColor "
                              ": null])")
    assert legend == [["tau-free", "rgb(0, 0, 0)"], ["tau^1-torsion", "rgb(198, 40, 40)"],
                      ["dashed: tau^k times the target", None]]
    before = page.scale
    page.click("#zoom-in")
    assert page.scale == pytest.approx(before * 1.5)
    w, h = browser.evaluate(
        "[document.getElementById('chart').clientWidth, document.getElementById('chart').clientHeight]")
    shown = [p for xy in place.values() if 3 < (p := page.on_canvas(*xy))[0] < w - 3 and 3 < p[1] < h - 3]
    assert 10 < len(shown) < len(place) and max(page.greys(shown)) < DARK  # the dots followed the zoom
    page.assert_clean()
