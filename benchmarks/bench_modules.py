"""Time the module kinds beside the sphere: whole runs and the resolution alone, per generator.

    python benchmarks/bench_modules.py --stem 60 --max-s 20 --repeat 3

Cases: S_2 (Nassau's algorithm and the standard one: the yardsticks), RP_inf (infinite projective space,
standard), A-mod-Sq1-Sq2 = A//A(1) over the whole algebra (finitely presented, standard) and by the change
of rings (F2 over A(1)), and C2v14 (a cofiber). Whole runs are fresh `python -m nassau resolve` processes as in bench_resolve.py
(start-up and kernel loading included, after a warm-up); "work" is resolve() alone, in this process, on one
thread, which is what the per-generator figure uses (repeated until it adds up to 2 s: the change of rings takes
0.05 s, within this machine's noise). The runs in this process share the product tables the first one made, so
"work" leaves their filling out for every case alike; whole runs include it.
"""
from __future__ import annotations

import argparse
import statistics
import time

from bench_resolve import machine, run_once

#: In-process work is repeated until it adds up to this many seconds (and at least --repeat times).
MIN_WORK_SECONDS = 2.0
CASES = [("S_2", "nassau"), ("S_2", "standard"), ("RP_inf", "standard"), ("A-mod-Sq1-Sq2", "standard"),
         ("A-mod-Sq1-Sq2", "change-of-rings"), ("C2v14", "standard")]


def work(module_name: str, algorithm: str, stem: int, max_s: int) -> tuple[float, int]:
    """(seconds in resolve(), generators in the region) for one in-process, one-thread run."""
    from algebra.module_loader import load_module
    from nassau.engine import resolve
    from nassau.region import Region

    module = load_module(module_name)
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    start = time.perf_counter()
    res = resolve(module, region, algorithm, 1)
    seconds = time.perf_counter() - start
    return seconds, sum(k for b, k in res.dims().items() if region.contains(*b))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stem", type=int, default=60)
    ap.add_argument("--max-s", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# machine: {machine()}")
    print(f"# through stem {args.stem}, s <= {args.max_s}, {args.repeat} runs each after one warm-up, one thread")
    print("module           algorithm        gens  whole min/med/max s  RSS MiB  work min/med s    ms/gen (work)")
    # Every whole run before any in-process work: a child's peak RSS counts the parent's pages it was forked
    # with, so whole runs after work in this process would report this process's size.
    whole = {}
    for module, algorithm in CASES:
        run_once(args.stem, args.max_s, algorithm, 1, module)  # warm numba's cache for this path
        whole[module, algorithm] = [run_once(args.stem, args.max_s, algorithm, 1, module) for _ in range(args.repeat)]
    medians, mins = {}, {}
    for module, algorithm in CASES:
        runs = whole[module, algorithm]
        walls = [w for w, _ in runs]
        works = [work(module, algorithm, args.stem, args.max_s) for _ in range(args.repeat)]
        while sum(w for w, _ in works) < MIN_WORK_SECONDS:  # a run of 0.06 s needs many to see past the noise
            works.append(work(module, algorithm, args.stem, args.max_s))
        gens = works[0][1]
        seconds = [w for w, _ in works]
        medians[module, algorithm] = statistics.median(seconds)
        mins[module, algorithm] = min(seconds)
        per_gen = 1000 * medians[module, algorithm] / max(gens, 1)
        print(f"{module:16s} {algorithm:15s} {gens:5d}  {min(walls):6.2f} {statistics.median(walls):6.2f} "
              f"{max(walls):6.2f}  {max(r for _, r in runs):7.0f}  {min(seconds):7.3f} {medians[module, algorithm]:7.3f}"
              f"  {per_gen:9.2f}", flush=True)
    ratio = medians["A-mod-Sq1-Sq2", "standard"] / medians["A-mod-Sq1-Sq2", "change-of-rings"]
    best = mins["A-mod-Sq1-Sq2", "standard"] / mins["A-mod-Sq1-Sq2", "change-of-rings"]
    print(f"# A-mod-Sq1-Sq2: the change of rings resolves {ratio:.1f}x faster than over A (work medians; "
          f"{best:.1f}x from the minima)")


if __name__ == "__main__":
    main()
