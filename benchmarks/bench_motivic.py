"""C-motivic Ext of the sphere beside our classical run of the same region: wall and CPU time, peak RSS, ratios.

    python benchmarks/bench_motivic.py --stems 60 90 --repeat 3

Each run is a fresh CLI process, `nassau resolve S_2 --stem N --max-s S --threads 1 --quiet` on one core
(NUMBA_NUM_THREADS=1: ONE_CORE), once with --motivic
(which resolves one filtration more, s <= S + 1, so the top row's tau-torsion is known, and prints every generator
with its products) and once with each classical algorithm (standard, the motivic engine's step; nassau, the
fastest). Every s: S = N / 2 + 3, as bench_scaling. A warm-up run of each fills numba's cache first and is not
counted. Weights: all of them, no --max-weight. For the sphere the generators in degree t have weights between 0
and t / 2 (w(P(R)) <= deg(R) / 2, docs/motivic.md), a bound that is reached (h1^k: t = 2k, weight k), so every
weight up to t / 2 can carry a class and none is cut; each bidegree's elimination finds them all at once. The load
average (1 minute) after each stem says how busy the machine was.

    python benchmarks/bench_motivic.py --stems 50 60 --repeat 3 --baseline /tmp/main-430d8e9

also runs the motivic run of another source tree (a checkout of an earlier commit) in each round, right after this
tree's, and prints its figures and the CPU ratio: the pairing keeps a busy machine's load alike for both.
`--kinds motivic` leaves the classical runs out; `ctau` times C(tau) (`nassau resolve Ctau --motivic`, F_2 over
A^C/tau on the stem-shaped region) and prints its CPU against the classical standard run's.

    python benchmarks/bench_motivic.py --stems 90 --repeat 3 --kinds ctau standard
    python benchmarks/bench_motivic.py --stems 60 --repeat 3 --kinds motivic --save --baseline TREE

`--save` gives every run a fresh save directory (what saving costs: over A^C each kept kernel is written too).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine, run_usage  # noqa: E402

#: kind -> (module, --algorithm, further options)
KINDS = {"motivic": ("S_2", "auto", ("--motivic",)), "ctau": ("Ctau", "auto", ("--motivic",)),
         "standard": ("S_2", "standard", ()), "nassau": ("S_2", "nassau", ())}


#: One thread means one core: the compiled kernels' own threads (numba's, for the elimination's parallel row chunks)
#: are held to one too. Left free they spin on an idle second core, so that a run's CPU depended on whether other
#: work kept that core busy: S_2 over A^C through stem 70 at 430d8e9 took 338 s of CPU (222.6 s of wall) on the
#: quiet 2-core EPYC, 213 s (220.7 s) beside other work.
ONE_CORE = {"NUMBA_NUM_THREADS": "1"}


def run_once(kind: str, stem: int, max_s: int, tree: str | None = None, save: bool = False
             ) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MiB, CPU seconds) of one CLI run of this kind (of the nassau in `tree` if given), on
    one core; save: into a fresh save directory (--save-dir), deleted after."""
    module, algorithm, extra = KINDS[kind]
    with tempfile.TemporaryDirectory(prefix="bench-motivic-") as tmp:
        more = ("--save-dir", os.path.join(tmp, "save")) if save else ()
        return run_usage(stem, max_s, algorithm, 1, module, (*extra, *more), tree, ONE_CORE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stems", type=int, nargs="+", default=[60, 90])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", metavar="TREE", help="also time the motivic run of this source tree")
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    parser.add_argument("--save", action="store_true", help="every run saves into a fresh --save-dir")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    runs = {kind: None for kind in args.kinds}
    if args.baseline:
        runs["baseline"] = args.baseline
    for kind, tree in runs.items():
        run_once("motivic" if kind == "baseline" else kind, 20, 13, tree)
    for stem in args.stems:
        max_s = stem // 2 + 3
        walls: dict[str, list[float]] = {k: [] for k in runs}
        cpus: dict[str, list[float]] = {k: [] for k in runs}
        rss: dict[str, float] = {}
        for _ in range(args.repeat):
            for kind, tree in runs.items():
                wall, peak, cpu = run_once("motivic" if kind == "baseline" else kind, stem, max_s, tree, args.save)
                walls[kind].append(wall)
                cpus[kind].append(cpu)
                rss[kind] = max(rss.get(kind, 0.0), peak)
        med = {k: statistics.median(v) for k, v in walls.items()}
        cpu_med = {k: statistics.median(v) for k, v in cpus.items()}
        for kind in runs:
            v, c = walls[kind], cpus[kind]
            print(f"stem {stem}, s <= {max_s}, {kind:>8}: wall min {min(v):.2f} / median {med[kind]:.2f} / "
                  f"max {max(v):.2f} s, CPU min {min(c):.2f} / median {cpu_med[kind]:.2f} / max {max(c):.2f} s "
                  f"({len(v)} runs), peak RSS {rss[kind]:.0f} MiB")
        if "baseline" in runs and "motivic" in runs:
            ratios = sorted(b / m for b, m in zip(cpus["baseline"], cpus["motivic"]))
            print(f"stem {stem}: baseline / motivic CPU {cpu_med['baseline'] / cpu_med['motivic']:.2f}x (medians; "
                  f"paired rounds {' '.join(f'{r:.2f}' for r in ratios)})")
        if {"motivic", "standard", "nassau"} <= set(runs):
            print(f"stem {stem}: motivic / standard {med['motivic'] / med['standard']:.2f}x, motivic / nassau "
                  f"{med['motivic'] / med['nassau']:.2f}x (wall medians; CPU medians "
                  f"{cpu_med['motivic'] / cpu_med['standard']:.2f}x, {cpu_med['motivic'] / cpu_med['nassau']:.2f}x); "
                  f"RSS motivic / standard {rss['motivic'] / rss['standard']:.2f}x")
        if {"ctau", "standard"} <= set(runs):
            print(f"stem {stem}: ctau / standard CPU {cpu_med['ctau'] / cpu_med['standard']:.2f}x (medians)")
        print(f"stem {stem}: load average {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
