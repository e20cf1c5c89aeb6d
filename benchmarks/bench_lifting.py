"""Time chain-map lifting on the sphere: products by g = x_(20,4,0) on every class, and <h0, h1, x> for every x.

    python benchmarks/bench_lifting.py --stems 60 70 80 --repeat 3
    python benchmarks/bench_lifting.py --stems 80 --classes g h0 --preimages nassau standard

Each run is a fresh process (so nothing is cached between runs) that resolves S_2 through the stem (Nassau's
algorithm, one thread), then lifts: the time of the resolution is printed beside, since the target is that lifting a
class costs no more than resolving once. For each task it reports the wall time (min / median / max over the runs),
the preimage calls (one per output bidegree, shared by every map through it) and the time per call, and the split of
the median run into Milnor products (batched kernel calls), row reductions, GF(2) matrix products and the rest
(Python, gathers, bookkeeping), measured by timing those entry points. Products by h_i are read off the
resolution without lifting, so `h0` here forces the lift (the most expensive class: every bidegree is lifted).
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

CLASSES = {"g": (20, 4), "h0": (0, 1), "h1": (1, 1), "c0": (8, 3), "d0": (14, 4)}
#: Compiled kernels behind each share of the time (cProfile sees each call of a numba dispatcher by its name).
KERNELS = {"products": ("_batch_kernel",), "row reduction": ("_m4ri", "_m4ri_threaded", "_gauss_jordan"),
           "matmul": ("_addmul_rows", "_addmul_parallel")}


def child(stem: int, max_s: int, classes: list[str], preimages: str, profile: bool) -> dict:
    """One run in this process: resolve, then each task; wall times, preimage calls and (profiled) the split."""
    import cProfile
    import pstats

    import numpy as np

    from algebra.module.loader import load_module
    from nassau.engine.preimages import Preimages
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve
    from nassau.lifting.chain_map import ChainMap, lift
    from nassau.products.ext_algebra import ExtAlgebra
    from nassau.products.ext_class import ExtClass
    from nassau.products.massey import massey_products

    region = Region(max_s=max_s, min_degree=0, max_stem=stem)
    start = time.perf_counter()
    res = resolve(load_module("S_2"), region, "nassau", 1)
    out = {"resolve": time.perf_counter() - start, "tasks": {}}

    def measure(label: str, task, pre: Preimages) -> None:
        prof = cProfile.Profile() if profile else None
        begin = time.perf_counter()
        if prof is not None:
            prof.runcall(task)
        else:
            task()
        entry = {"total": time.perf_counter() - begin, "calls": pre.counters["calls"]}
        if prof is not None:
            stats = pstats.Stats(prof).stats
            for bucket, names in KERNELS.items():
                entry[bucket] = sum(v[3] for k, v in stats.items() if k[2] in names)
        out["tasks"][label] = entry

    for name in classes:
        n, s = CLASSES[name]
        pre = res.preimages = Preimages(res, preimages)  # a fresh cache per task
        f = ChainMap.from_class(res, res, n, s, np.array([1], dtype=np.uint8), region, name)
        measure(f"products by {name} ({preimages})", lambda f=f: lift([f]), pre)
    pre = res.preimages = Preimages(res, preimages)
    alg = ExtAlgebra(res, res)
    measure(f"<h0, h1, x> ({preimages})",
            lambda: massey_products(alg, ExtClass(0, 1, (1,)), ExtClass(1, 1, (1,)), region), pre)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stems", type=int, nargs="+", default=[60, 70, 80])
    ap.add_argument("--max-s", type=int, default=15)
    ap.add_argument("--classes", nargs="+", default=["g"], choices=sorted(CLASSES))
    ap.add_argument("--preimages", nargs="+", default=["nassau"], choices=["nassau", "standard"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", choices=["time", "profile"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.stems[0], args.max_s, args.classes, args.preimages[0], args.child == "profile")))
        return
    print(f"# machine: {machine()}")
    print(f"# S_2 resolved by Nassau's algorithm, one thread, s <= {args.max_s}; {args.repeat} runs each after one "
          "warm-up")
    print("# split: one more run under cProfile, shares of its (slower) total; resolve s: median of the timed runs")
    print("stem  task                            min s  median s   max s  calls  ms/call  products  rref  matmul  rest"
          "  resolve s")
    for stem in args.stems:
        for method in args.preimages:
            cmd = [sys.executable, __file__, "--stems", str(stem), "--max-s", str(args.max_s),
                   "--classes", *args.classes, "--preimages", method, "--child"]
            env = dict(os.environ, NUMBA_NUM_THREADS="1")

            def run(mode: str, cmd: list[str] = cmd, env: dict = env) -> dict:
                return json.loads(subprocess.run([*cmd, mode], check=True, capture_output=True, env=env).stdout)

            run("time")  # warm-up: numba's cache, the page cache
            runs = [run("time") for _ in range(args.repeat)]
            split = run("profile")
            resolve = statistics.median(r["resolve"] for r in runs)
            for label in runs[0]["tasks"]:
                totals = sorted(r["tasks"][label]["total"] for r in runs)
                calls = runs[0]["tasks"][label]["calls"]
                prof = split["tasks"][label]
                share = {b: 100 * prof[b] / prof["total"] for b in KERNELS}
                rest = 100 - sum(share.values())
                per_call = 1000 * statistics.median(totals) / max(calls, 1)
                print(f"{stem:4d}  {label:30s} {totals[0]:6.2f} {statistics.median(totals):9.2f} {totals[-1]:7.2f} "
                      f"{calls:6d} {per_call:8.1f} {share['products']:8.0f}% {share['row reduction']:4.0f}% "
                      f"{share['matmul']:6.0f}% {rest:4.0f}%  {resolve:9.2f}", flush=True)


if __name__ == "__main__":
    main()
