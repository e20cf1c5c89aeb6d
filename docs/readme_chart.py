"""Redraw the README's picture: the S_2 chart through stem 60 as nassau draws it (`--svg`: title, axis titles,
legend), rendered to PNG by headless Chromium; with --motivic the C-motivic chart of docs/motivic.md.

    python docs/readme_chart.py [--stem 60] [--max-s 30] [-o docs/s2-stem60.png]
    python docs/readme_chart.py --motivic --stem 40 --max-s 20 -o docs/s2-motivic-stem40.png
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nassau  # noqa: E402
from tests.browser import Chromium, browser_path, no_browser_reason  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stem", type=int, default=60)
    ap.add_argument("--max-s", type=int, default=30)
    ap.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "s2-stem60.png")
    ap.add_argument("--motivic", action="store_true", help="the C-motivic chart (nassau resolve --motivic --svg)")
    args = ap.parse_args()
    if browser_path() is None:
        raise SystemExit(no_browser_reason())
    ext = nassau.resolve("S_2", stem=args.stem, max_s=args.max_s, motivic=args.motivic)
    text = ext.svg()
    root = ET.fromstring(text)
    width, height = int(root.get("width")), int(root.get("height"))
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        svg = Path(tmp) / "chart.svg"
        svg.write_text(text, encoding="utf-8")
        with Chromium(Path(tmp) / "profile", width, height) as browser:
            browser.open(svg.as_uri())
            args.output.write_bytes(browser.screenshot(0, 0, width, height))
    print(f"wrote {args.output} ({width} x {height})")


if __name__ == "__main__":
    main()
