"""The interactive chart page of S_2: its size, its time to first render and its frame times while zooming, in
headless Chromium (software raster, no GPU), per stem.

    python benchmarks/bench_chart_page.py --stems 60 100 120 --max-s 40 --repeat 5 [--save-dir DIR]

S_2 is resolved once through the largest stem into --save-dir (default: a directory in the system's temp dir,
reused by later runs; stem 120, s <= 40 takes long the first time) and each stem's chart is cut from it. For each
stem the page is loaded --repeat times in one browser from a file:// URL:
- first frame: from navigation start to the end of the page's first draw (its own clock, performance.now()),
  which covers reading the HTML, parsing the data, building the lookups and issuing every dot and line;
- to screenshot: from the navigate command to a finished screenshot, a bound that includes the raster and the
  DevTools round trips;
- zoom frames: 60 wheel events (30 in, 30 out, by 1.08 each, from the whole chart), each frame timed from its
  start through the page's drawing and a canvas readback that waits for the raster; on a chart of more than a
  few thousand dots and lines these frames move a snapshot, and the chart is redrawn when the wheel pauses;
- whole-chart redraw: the same timing for a full redraw of the whole chart (the `fit` button), the frame that
  follows a pause.
Each figure is min / median / max over the loads (frames: over all frames of all loads).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_resolve import machine  # noqa: E402  (benchmarks/ is this script's directory)

import nassau  # noqa: E402
from nassau.store.save_dir import StoreError  # noqa: E402
from tests.browser import Chromium, browser_path, no_browser_reason  # noqa: E402

PROBE = """(async () => {
  const c = document.getElementById('chart'), g = c.getContext('2d'), box = c.getBoundingClientRect();
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const timed = async () => { const start = await frame(); g.getImageData(0, 0, 1, 1); return performance.now() - start; };
  const wheel = (dy) => c.dispatchEvent(new WheelEvent('wheel', {deltaY: dy, bubbles: true, cancelable: true,
    clientX: box.left + c.clientWidth / 2, clientY: box.top + c.clientHeight / 2}));
  const zoom = [], full = [];
  await frame();
  for (let i = 0; i < 60; i++) {
    wheel(i < 30 ? -50 : 50);  // the page's handler asks for its frame first, so it is drawn when timed() resumes
    zoom.push(await timed());
  }
  await new Promise(r => setTimeout(r, 300));
  for (let i = 0; i < 3; i++) {
    document.getElementById('zoom-fit').click();
    full.push(await timed());
  }
  return [zoom, full];
})()"""


def spread(values: list[float]) -> str:
    return f"{min(values):7.1f} {statistics.median(values):7.1f} {max(values):7.1f}"


def sphere(save_dir: Path, stem: int, max_s: int) -> nassau.Ext:
    """S_2 through the stem from the save directory, computing what it lacks."""
    try:
        ext = nassau.load(save_dir)
        if ext.region.max_stem >= stem and ext.region.max_s >= max_s:
            return ext
    except StoreError:
        pass
    print(f"# resolving S_2 through stem {stem}, s <= {max_s} into {save_dir} (once)", flush=True)
    return nassau.resolve("S_2", stem=stem, max_s=max_s, save_dir=save_dir)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stems", type=int, nargs="+", default=[60, 100, 120])
    ap.add_argument("--max-s", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--save-dir", type=Path, default=Path(tempfile.gettempdir()) / "nassau-bench-S_2")
    ap.add_argument("--size", default="1280x800", help="browser window, WIDTHxHEIGHT CSS pixels")
    args = ap.parse_args()
    if browser_path() is None:
        raise SystemExit(no_browser_reason())
    width, height = (int(x) for x in args.size.split("x"))
    sphere(args.save_dir, max(args.stems), args.max_s)
    print(f"# machine: {machine()}")
    print(f"# S_2, s <= {args.max_s}, h0..h3 lines; headless Chromium {width}x{height}, software raster; "
          f"{args.repeat} loads per stem")
    print("stem classes  lines  page KiB  svg KiB |  first frame ms min/med/max | to screenshot ms min/med/max"
          " |  zoom frame ms min/med/max | whole-chart redraw ms min/med/max")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp, Chromium(Path(tmp) / "profile", width, height) as browser:
        for stem in args.stems:
            ext = nassau.load(args.save_dir, stem=stem, max_s=args.max_s)
            page = Path(tmp) / f"S_2-{stem}.html"
            html = ext.html()
            page.write_text(html, encoding="utf-8")
            first, shot, zoom, redraw = [], [], [], []
            for _ in range(args.repeat):
                start = time.perf_counter()
                browser.open(page.as_uri())
                browser.screenshot()
                shot.append(1000 * (time.perf_counter() - start))
                first.append(browser.evaluate("nassauChart.stats.firstFrame"))
                z, f = browser.evaluate(PROBE)
                zoom += z
                redraw += f
            print(f"{stem:4d} {len(ext.generators):7d} {len(ext.products):6d} {len(html.encode()) / 1024:9.0f} "
                  f"{len(ext.svg().encode()) / 1024:8.0f} | {spread(first):>27} | {spread(shot):>28} | "
                  f"{spread(zoom):>26} | {spread(redraw):>34}", flush=True)


if __name__ == "__main__":
    main()
