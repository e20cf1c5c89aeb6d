"""Time the secondary lifts on the sphere: d2, a product in Mod_{Cλ²} and a Massey product in Mod_{Cλ²}.

    python benchmarks/bench_secondary.py --stem 50 --max-s 15 --repeat 3
    python benchmarks/bench_secondary.py --stem 40 --product h_1=1,1,[1] --massey h_3=7,1,[1] h_0^4=0,4,[1]
    python benchmarks/bench_secondary.py --stem 70 --max-s 20 --threads 2 --algorithm standard
    python benchmarks/bench_secondary.py --stem 70 --max-s 20 --repeat 7 --only d2     # resolve and d2 lift only

Each run is a fresh process (nothing cached between runs; kernels are compiled by a warm-up over stem 12 first)
that resolves S_2 through the stem (--algorithm, Nassau's by default as `auto` would, one thread) and then times,
one after the other, with that algorithm's preimages: the lift of the secondary resolution (d2), the E3 page,
every line of `nassau secondary --product` for the class, and every line of `--massey A B` (`--only d2`: the
resolution and the d2 lift alone, with their ratio per run, which is what the d2 target is about). It prints the process
CPU time of each phase, min / median / max over the runs, and its median wall time (the one to read with --threads
2: CPU time adds up the threads), then each run's peak RSS; CPU time is less disturbed than wall time on a shared
machine, but still not immune.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_resolve import machine

PHASES = ("resolve", "d2 lift", "E3 page", "product", "massey")


def child(stem: int, max_s: int, product: str, massey: list[str], algorithm: str, threads: int,
          d2_only: bool) -> dict:
    """One run in this process: the CPU and wall seconds of each phase and how many lines each printed."""
    from algebra.module.loader import load_module
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve
    from nassau.products.ext_class import parse_named_class
    from nassau.secondary.homotopy import d2_entries, secondary_homotopy
    from nassau.secondary.massey import parse_lambda_class, secondary_massey
    from nassau.secondary.product import SecondaryExt, secondary_products

    name, x = parse_named_class(product)
    a, b = map(parse_lambda_class, massey)

    def everything(region: Region) -> dict:
        times, walls, counts = {}, {}, {}
        clock, wall = time.process_time(), time.perf_counter()

        def lap(phase: str) -> None:
            nonlocal clock, wall
            now, now_wall = time.process_time(), time.perf_counter()
            times[phase], walls[phase], clock, wall = now - clock, now_wall - wall, now, now_wall

        res = resolve(load_module("S_2"), region, algorithm, threads)
        lap("resolve")
        h = secondary_homotopy(res, region, threads)  # through the resolution's own preimages, as the CLI does
        counts["d2 lift"] = len(d2_entries(h, region))
        lap("d2 lift")
        if d2_only:
            return {"seconds": times, "wall": walls, "lines": counts}
        ext = SecondaryExt(h, region, h, region, threads)
        counts["E3 page"] = len(ext.module_page.d2)
        lap("E3 page")
        counts["product"] = len(secondary_products(ext, x, name))
        lap("product")
        counts["massey"] = len(secondary_massey(ext, a, b))
        lap("massey")
        return {"seconds": times, "wall": walls, "lines": counts}

    everything(Region(max_s=min(max_s, 6), min_degree=0, max_stem=12))
    return everything(Region(max_s=max_s, min_degree=0, max_stem=stem))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stem", type=int, default=50)
    parser.add_argument("--max-s", type=int, default=15)
    parser.add_argument("--product", default="h_0=0,1,[1]", metavar="NAME=n,s,[v]")
    parser.add_argument("--massey", nargs=2, default=["h_2=3,1,[1]", "h_3=7,1,[1]"], metavar=("A", "B"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--algorithm", choices=("nassau", "standard"), default="nassau",
                        help="the resolution's algorithm, and its preimages' (default nassau: what `auto` takes)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", choices=("d2",), help="time the resolution and the d2 lift only")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.stem, args.max_s, args.product, args.massey, args.algorithm, args.threads,
                               args.only == "d2")))
        return
    print(f"{machine()}; S_2 through stem {args.stem}, s <= {args.max_s}, {args.algorithm}, {args.threads} thread(s); "
          f"product {args.product}, massey {' '.join(args.massey)}; {args.repeat} runs")
    runs = []
    for _ in range(args.repeat):
        cmd = [sys.executable, __file__, "--child", "--stem", str(args.stem), "--max-s", str(args.max_s),
               "--product", args.product, "--massey", *args.massey, "--algorithm", args.algorithm,
               "--threads", str(args.threads), *(["--only", args.only] if args.only else [])]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        if status:
            raise SystemExit(f"run failed: {' '.join(cmd)}")
        runs.append(json.loads(out) | {"rss": usage.ru_maxrss / 1024})
    for phase in PHASES[:2] if args.only else PHASES:
        values = [run["seconds"][phase] for run in runs]
        lines = f" ({runs[0]['lines'][phase]} {'d2 sources' if phase == 'E3 page' else 'lines'})" \
            if phase in runs[0]["lines"] else ""
        walls = [run["wall"][phase] for run in runs]
        print(f"  {phase:8} CPU s: min {min(values):7.2f}  median {statistics.median(values):7.2f}  "
              f"max {max(values):7.2f}   wall s: median {statistics.median(walls):7.2f}{lines}")
    ratios = [run["seconds"]["d2 lift"] / run["seconds"]["resolve"] for run in runs]
    print(f"  d2 lift / resolve, CPU, per run: {', '.join(f'{r:.2f}' for r in ratios)} "
          f"(median {statistics.median(ratios):.2f})")
    print(f"  peak RSS MiB (whole run): {', '.join(str(round(run['rss'])) for run in runs)}")


if __name__ == "__main__":
    main()
