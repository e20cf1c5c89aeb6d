"""Time the secondary lifts on the sphere: d2, a product in Mod_{Cλ²} and a Massey product in Mod_{Cλ²}.

    python benchmarks/bench_secondary.py --stem 50 --max-s 15 --repeat 3
    python benchmarks/bench_secondary.py --stem 40 --product h_1=1,1,[1] --massey h_3=7,1,[1] h_0^4=0,4,[1]

Each run is a fresh process (nothing cached between runs; kernels are compiled by a warm-up over stem 12 first)
that resolves S_2 through the stem (standard algorithm, one thread) and then times, one after the other: the lift
of the secondary resolution (d2), the E3 page, every line of `nassau secondary --product` for the class, and every
line of `--massey A B`. It prints the process CPU time of each phase, min / median / max over the runs; CPU time is
less disturbed than wall time on a shared machine, but still not immune.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_resolve import machine

PHASES = ("resolve", "d2 lift", "E3 page", "product", "massey")


def child(stem: int, max_s: int, product: str, massey: list[str]) -> dict:
    """One run in this process: the CPU seconds of each phase and how many lines each printed."""
    from algebra.module_loader import load_module
    from nassau.engine import resolve
    from nassau.ext_class import parse_named_class
    from nassau.quasi_inverses import Preimages
    from nassau.region import Region
    from nassau.secondary import d2_entries, secondary_homotopy
    from nassau.secondary_massey import parse_lambda_class, secondary_massey
    from nassau.secondary_product import SecondaryExt, secondary_products

    name, x = parse_named_class(product)
    a, b = map(parse_lambda_class, massey)

    def everything(region: Region) -> dict:
        times, counts = {}, {}
        clock = time.process_time()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.process_time()
            times[phase], clock = now - clock, now

        res = resolve(load_module("S_2"), region, "standard", 1)
        lap("resolve")
        h = secondary_homotopy(res, region, Preimages(res), 1)
        counts["d2 lift"] = len(d2_entries(h, region))
        lap("d2 lift")
        ext = SecondaryExt(h, region, h, region, Preimages(res))
        counts["E3 page"] = len(ext.module_page.d2)
        lap("E3 page")
        counts["product"] = len(secondary_products(ext, x, name))
        lap("product")
        counts["massey"] = len(secondary_massey(ext, a, b))
        lap("massey")
        return {"seconds": times, "lines": counts}

    everything(Region(max_s=min(max_s, 6), min_degree=0, max_stem=12))
    return everything(Region(max_s=max_s, min_degree=0, max_stem=stem))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stem", type=int, default=50)
    parser.add_argument("--max-s", type=int, default=15)
    parser.add_argument("--product", default="h_0=0,1,[1]", metavar="NAME=n,s,[v]")
    parser.add_argument("--massey", nargs=2, default=["h_2=3,1,[1]", "h_3=7,1,[1]"], metavar=("A", "B"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.stem, args.max_s, args.product, args.massey)))
        return
    print(f"{machine()}; S_2 through stem {args.stem}, s <= {args.max_s}; product {args.product}, "
          f"massey {' '.join(args.massey)}; {args.repeat} runs")
    runs = []
    for _ in range(args.repeat):
        cmd = [sys.executable, __file__, "--child", "--stem", str(args.stem), "--max-s", str(args.max_s),
               "--product", args.product, "--massey", *args.massey]
        runs.append(json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout))
    for phase in PHASES:
        values = [run["seconds"][phase] for run in runs]
        lines = f" ({runs[0]['lines'][phase]} {'d2 sources' if phase == 'E3 page' else 'lines'})" \
            if phase in runs[0]["lines"] else ""
        print(f"  {phase:8} CPU s: min {min(values):7.2f}  median {statistics.median(values):7.2f}  "
              f"max {max(values):7.2f}{lines}")


if __name__ == "__main__":
    main()
