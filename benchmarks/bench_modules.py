"""Time the module kinds beside the sphere: whole runs and the resolution alone, per generator.

    python benchmarks/bench_modules.py --stem 60 --max-s 20 --repeat 3

Cases: S_2 (Nassau's algorithm and the standard one: the yardsticks), RP_inf (infinite projective space,
standard), A-mod-Sq1-Sq2 = A//A(1) over the whole algebra (finitely presented, standard) and by the change
of rings (F2 over A(1)), and C2v14 (a cofiber). Whole runs are fresh `python -m nassau resolve` processes as in bench_resolve.py
(start-up and kernel loading included, after a warm-up); "work" is resolve() alone, in this process, on one
thread, which is what the per-generator figure uses (repeated until it adds up to 2 s: the change of rings takes
0.05 s, within this machine's noise). The change of rings' ratio over A comes from paired rounds (paired_ratios).
Each run loads its module afresh, so it fills its own product tables (they are kept on the algebra object), as a
whole run does: "work" includes their filling.
"""
from __future__ import annotations

import argparse
import statistics
import time

from bench_resolve import machine, run_once

#: In-process work is repeated until it adds up to this many seconds (and at least --repeat times).
MIN_WORK_SECONDS = 2.0
#: Rounds of the paired change-of-rings ratio (at least --repeat).
PAIRED_ROUNDS = 7
CASES = [("S_2", "nassau"), ("S_2", "standard"), ("RP_inf", "standard"), ("A-mod-Sq1-Sq2", "standard"),
         ("A-mod-Sq1-Sq2", "change-of-rings"), ("C2v14", "standard")]


def work(module_name: str, algorithm: str, stem: int, max_s: int) -> tuple[float, int]:
    """(seconds in resolve(), generators in the region) for one in-process, one-thread run."""
    from algebra.module.loader import load_module
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve

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
    works = {}
    for case in CASES:
        works[case] = [work(*case, args.stem, args.max_s) for _ in range(args.repeat)]
        while sum(w for w, _ in works[case]) < MIN_WORK_SECONDS:  # a run of 0.06 s needs many to see past the noise
            works[case].append(work(*case, args.stem, args.max_s))
    for module, algorithm in CASES:
        runs = whole[module, algorithm]
        walls = [w for w, _ in runs]
        seconds = [w for w, _ in works[module, algorithm]]
        gens = works[module, algorithm][0][1]
        per_gen = 1000 * statistics.median(seconds) / max(gens, 1)
        print(f"{module:16s} {algorithm:15s} {gens:5d}  {min(walls):6.2f} {statistics.median(walls):6.2f} "
              f"{max(walls):6.2f}  {max(r for _, r in runs):7.0f}  {min(seconds):7.3f} {statistics.median(seconds):7.3f}"
              f"  {per_gen:9.2f}", flush=True)
    ratios = paired_ratios(args.stem, args.max_s, max(args.repeat, PAIRED_ROUNDS))
    print(f"# A-mod-Sq1-Sq2: the change of rings resolves {statistics.median(ratios):.1f}x faster than over A (median "
          f"of {len(ratios)} paired rounds, {ratios[0]:.1f}x to {ratios[-1]:.1f}x)")
    for (module, algorithm), per in per_generator_ratios(args.stem, args.max_s, max(args.repeat, PAIRED_ROUNDS)).items():
        print(f"# {module} ({algorithm}) per generator / S_2 (nassau) per generator: {statistics.median(per):.2f} "
              f"(median of {len(per)} rounds, {per[0]:.2f} to {per[-1]:.2f})")


def per_generator_ratios(stem: int, max_s: int, rounds: int) -> dict[tuple[str, str], list[float]]:
    """Each module kind's ms per generator over S_2's (Nassau's algorithm, what `auto` runs), round by round, sorted:
    a round times S_2 and then each kind once, so the machine's drift lands on both sides of each ratio."""
    kinds = [("RP_inf", "standard"), ("A-mod-Sq1-Sq2", "change-of-rings"), ("C2v14", "standard")]  # as auto runs them
    out: dict[tuple[str, str], list[float]] = {case: [] for case in kinds}
    for _ in range(rounds):
        seconds, gens = work("S_2", "nassau", stem, max_s)
        base = seconds / gens
        for case in kinds:
            seconds, gens = work(*case, stem, max_s)
            out[case].append(seconds / gens / base)
    return {case: sorted(per) for case, per in out.items()}


def paired_ratios(stem: int, max_s: int, rounds: int) -> list[float]:
    """Over A / by the change of rings for A-mod-Sq1-Sq2, round by round, sorted: each round times one run over A
    and then change-of-rings runs adding up to as long (their median), so a drift of this machine's speed (it
    changes by half within a day) lands on both sides of a ratio alike."""
    out = []
    for _ in range(rounds):
        over_a, _ = work("A-mod-Sq1-Sq2", "standard", stem, max_s)
        cor = [work("A-mod-Sq1-Sq2", "change-of-rings", stem, max_s)[0]]
        while sum(cor) < over_a:
            cor.append(work("A-mod-Sq1-Sq2", "change-of-rings", stem, max_s)[0])
        out.append(over_a / statistics.median(cor))
    return sorted(out)


if __name__ == "__main__":
    main()
