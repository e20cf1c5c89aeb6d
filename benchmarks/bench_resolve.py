"""Time whole resolutions (the sphere by default): wall time and peak RSS per stem, repeated, plus a profile split.

    python benchmarks/bench_resolve.py --algorithm nassau --stems 60 70 80 90 100 --threads 1 2 --repeat 3
    python benchmarks/bench_resolve.py --algorithm standard --stems 40 50 60 70 80 --threads 1
    python benchmarks/bench_resolve.py --module S_3 --algorithm standard --stems 100 150 200 --max-s 50 --threads 1

Each run is a fresh `python -m nassau resolve MODULE --stem N --max-s S --quiet` process, so the times include
start-up and loading compiled kernels from numba's cache (a warm-up run fills the cache first and is not
counted). Peak RSS is the child's maximum resident set (os.wait4). `--profile` adds one in-process run
under cProfile per stem and splits its time into Milnor products, row reduction and the rest.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time

REFERENCE = {  # sseq on this class of machine (REFERENCE / issues): seconds, one thread
    "nassau": {60: 0.96, 70: 3.3, 80: 9.6, 90: 28.6, 100: 82.0},
    "standard": {40: 0.07, 50: 0.30, 60: 1.3, 70: 4.5, 80: 15.3},
}
REFERENCE_2CORES = {"nassau": {80: 8.1, 90: 21.2, 100: 47.2}}
REFERENCE_RSS_MIB = {"nassau": {60: 21, 70: 36, 80: 61, 90: 100, 100: 168}, "standard": {80: 260}}


def machine() -> str:
    """The CPU, its widest vector unit and the core count: a reference built for the native CPU gains more from
    AVX-512 than our kernels do (S_2 through stem 90 on one thread: 0.83 on an older EPYC, 1.00 on a Zen 5 one)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model} ({vector}), {os.cpu_count()} cores, Python {platform.python_version()}"


def run_once(stem: int, max_s: int, algorithm: str, threads: int, module: str = "S_2",
             extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one CLI run (extra: further options, e.g. --motivic)."""
    return run_usage(stem, max_s, algorithm, threads, module, extra)[:2]


def run_usage(stem: int, max_s: int, algorithm: str, threads: int, module: str = "S_2",
              extra: tuple[str, ...] = (), tree: str | None = None, env: dict[str, str] | None = None
              ) -> tuple[float, float, float]:
    """run_once's (wall seconds, peak RSS MiB) and the run's CPU seconds (user + system), which a machine busy with
    other work inflates less than the wall time. tree: run the nassau of that source tree (a checkout of another
    commit) instead of the one on the path; env: variables set for the run."""
    cmd = [sys.executable, "-m", "nassau", "resolve", module, "--stem", str(stem), "--max-s", str(max_s),
           "--algorithm", algorithm, "--threads", str(threads), "--quiet", *extra]
    env = {**os.environ, **(env or {})}
    if tree is not None:
        env["PYTHONPATH"] = os.path.abspath(tree)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, cwd=tree, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"run failed: {' '.join(cmd)}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def profile_split(stem: int, max_s: int, algorithm: str, module_name: str = "S_2") -> dict[str, float]:
    """Seconds in products, row reduction and everything else, from one single-threaded in-process run."""
    from algebra.module.loader import load_module
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve

    module = load_module(module_name)
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.runcall(resolve, module, region, algorithm, 1)
    total = time.perf_counter() - start
    stats = pstats.Stats(prof).stats
    products = sum(v[2] for k, v in stats.items() if k[2] in ("_batch_kernel", "_odd_batch_kernel"))
    rref = sum(v[2] for k, v in stats.items() if k[2] in ("_m4ri", "_m4ri_threaded", "_gauss_jordan", "_rref"))
    return {"total": total, "products": products, "row reduction": rref, "rest": total - products - rref}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="S_2", help="module to resolve (S_2, S_3, S_5, ...)")
    ap.add_argument("--algorithm", default="nassau", choices=["nassau", "standard"])
    ap.add_argument("--stems", type=int, nargs="+", default=[60, 70, 80])
    ap.add_argument("--max-s", type=int, default=15)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    print(f"# machine: {machine()}")
    print(f"# {args.module}, s <= {args.max_s}, {args.algorithm}, {args.repeat} runs each after one warm-up")
    run_once(min(args.stems), args.max_s, args.algorithm, 1, args.module)  # fill numba's cache
    # The quoted reference figures are for S_2 only.
    ref = REFERENCE.get(args.algorithm, {}) if args.module == "S_2" else {}
    print("stem threads   min s  median s   max s  peak RSS MiB   reference s (RSS MiB)")
    for stem in args.stems:
        for threads in args.threads:
            runs = [run_once(stem, args.max_s, args.algorithm, threads, args.module) for _ in range(args.repeat)]
            walls = [w for w, _ in runs]
            rss = max(r for _, r in runs)
            table = (REFERENCE_2CORES.get(args.algorithm, {}) if threads > 1 else ref) if ref else {}
            r = table.get(stem)
            r_rss = REFERENCE_RSS_MIB.get(args.algorithm, {}).get(stem) if ref else None
            note = f"{r:.2f}" if r is not None else "-"
            if r_rss is not None:
                note += f" ({r_rss})"
            print(f"{stem:4d} {threads:7d} {min(walls):7.2f} {statistics.median(walls):9.2f} {max(walls):7.2f} "
                  f"{rss:13.0f}   {note}", flush=True)
    if args.profile:
        print("stem  total s  products s  row reduction s  rest s   (one thread, in process, under cProfile)")
        for stem in args.stems:
            p = profile_split(stem, args.max_s, args.algorithm, args.module)
            print(f"{stem:4d} {p['total']:8.2f} {p['products']:11.2f} {p['row reduction']:16.2f} {p['rest']:7.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
