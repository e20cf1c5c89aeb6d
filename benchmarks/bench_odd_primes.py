"""Nassau's algorithm at odd primes side by side: ours (auto: Nassau's), our standard algorithm and the reference.

    python benchmarks/bench_odd_primes.py --reference ~/.cache/nassau-reference/peer --repeat 3

Each case runs, in every round and alternately, `python -m nassau resolve MODULE --stem N --max-s S --threads 1`
with `--algorithm nassau` (and `--algorithm standard` where the case says so) and the reference's default build
(`resolve_through_stem-std`: the standard algorithm, the only one it has at odd primes), after one warm-up of each;
every chart must be byte-identical. Prints min / median / max wall seconds and peak RSS per engine, and the ratios
of medians (ours / reference, Nassau / our standard). The cases are issue 36's targets:
S_3 through stem 200, s <= 50; S_5 through stem 400, s <= 30; C3 through stem 150, s <= 40.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from bench_resolve import machine
from bench_vs_reference import MODULES, run

#: (module, stem, max s, whether our standard algorithm runs too)
CASES = [("S_3", 200, 50, True), ("S_5", 400, 30, False), ("C3", 150, 40, False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", required=True, help="the directory holding the reference's binaries")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="modules to run (default: every case)")
    args = ap.parse_args()
    ref_bin = Path(args.reference).expanduser() / "resolve_through_stem-std"
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    root = Path(__file__).resolve().parents[1]
    print(f"# machine: {machine()}")
    print(f"# one thread; reference {ref_bin.name}; {args.repeat} alternating rounds after a warm-up of each")
    for module, stem, max_s, with_standard in CASES:
        if args.only and module not in args.only:
            continue
        span = ["--stem", str(stem), "--max-s", str(max_s), "--threads", "1", "--quiet"]
        engines = {"nassau": ([sys.executable, "-m", "nassau", "resolve", module, *span, "--algorithm", "nassau"], root)}
        if with_standard:
            engines["standard"] = ([sys.executable, "-m", "nassau", "resolve", module, *span, "--algorithm",
                                    "standard"], root)
        engines["reference"] = ([str(ref_bin), module, "", str(stem), str(max_s)], MODULES)
        for cmd, cwd in engines.values():
            run(cmd, cwd, env)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in engines}
        charts = {}
        for _ in range(args.repeat):
            for name, (cmd, cwd) in engines.items():
                wall, rss, _, _, out = run(cmd, cwd, env)
                results[name].append((wall, rss))
                charts[name] = out
        same = len(set(charts.values())) == 1
        print(f"\n{module} through stem {stem}, s <= {max_s}: charts byte-identical: {same}")
        print("engine      min s  median s   max s  peak RSS MiB")
        for name, rows in results.items():
            walls = [w for w, _ in rows]
            print(f"{name:10s} {min(walls):6.2f} {statistics.median(walls):9.2f} {max(walls):7.2f} "
                  f"{max(r for _, r in rows):13.0f}")
        median = {name: statistics.median(w for w, _ in rows) for name, rows in results.items()}
        print(f"ratio nassau / reference: {median['nassau'] / median['reference']:.2f}"
              + (f"; nassau / our standard: {median['nassau'] / median['standard']:.2f}" if with_standard else ""))
        if not same:
            raise SystemExit(f"{module}: the charts differ")


if __name__ == "__main__":
    main()
