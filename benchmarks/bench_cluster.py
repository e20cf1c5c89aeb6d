"""Dask worker processes against threads, and what a cluster job costs beyond its computation.

    python benchmarks/bench_cluster.py --stem 100 --max-s 50 --repeat 3 --overhead-stems 60 80

1. Whole runs: `python -m nassau resolve S_2 --stem N --max-s S --save-dir FRESH --quiet` with `--threads 2` and
   with `--workers 2`, repeated (min / median / spread), after one small warm-up run of each (numba's cache).
2. Per-job overhead on a local cluster of 2 worker processes: a chain of dependent no-op tasks (the scheduler round
   trip a dependency costs) and a batch of independent ones (its throughput).
3. For each of --overhead-stems, one run on that cluster with the worker function timed inside the workers:
   seconds catching up on the save directory (loading inputs) against seconds computing and writing, per job and
   in total; and the time to load the whole finished directory into one fresh resolution, which is what every
   worker ends up loading (it holds every row at or below the jobs it runs).
4. From (2) and (3), an estimate of the number of workers P at which a stem-150 run stops scaling: the run takes
   at least W / P (the computation shared out), at least J c (J tasks through one scheduler at c seconds each, the
   independent no-op time of (2); a task is a run of cluster.RUN bidegrees of a row) and at least L (every worker
   loads the whole resolution), so P* ~ W / max(J c, L), with W and L extrapolated to stem 150 from the two
   --overhead-stems by a power law in the stem. The same with one task per bidegree is printed beside it.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from algebra.module.loader import module_from_spec
from algebra.module.spec import read_spec
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import dependencies, resolve, resolved_module
from nassau.store import cluster
from nassau.store.save_dir import SaveDir


def machine() -> str:
    model = platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    return f"{model}, {os.cpu_count()} cores (load average {load} at start), Python {platform.python_version()}"


def spread(xs: list[float]) -> str:
    return f"min {min(xs):.2f} s, median {statistics.median(xs):.2f} s, spread {max(xs) - min(xs):.2f} s"


def whole_run(stem: int, max_s: int, how: list[str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", str(stem), "--max-s", str(max_s),
               "--save-dir", str(Path(tmp) / "save"), "--quiet", *how]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start


def _noop(*_: object) -> int:
    return 0


def round_trips(c: cluster.Cluster, count: int) -> tuple[float, float]:
    """Seconds per task: along a chain of dependent tasks, and over independent ones."""
    start = time.perf_counter()
    fut = c.client.submit(_noop, key="chain-0")
    for k in range(1, count):
        fut = c.client.submit(_noop, fut, key=f"chain-{k}")
    fut.result()
    chain = (time.perf_counter() - start) / count
    start = time.perf_counter()
    futs = [c.client.submit(_noop, k, key=f"flat-{k}") for k in range(count)]
    c.client.gather(futs)
    flat = (time.perf_counter() - start) / count
    return chain, flat


def _install_timers() -> None:
    """On a worker: time the catch-up and the computation of every job (kept on the cluster module)."""
    from nassau.store import cluster as worker_cluster

    times = worker_cluster.__dict__.setdefault("_bench_times", {"load": [], "compute": []})
    if getattr(worker_cluster, "_bench_installed", False):
        return
    catch_up, compute = worker_cluster._WorkerRun.catch_up, worker_cluster.compute

    def timed_catch_up(self, s: int, t: int) -> None:
        start = time.perf_counter()
        catch_up(self, s, t)
        times["load"].append(time.perf_counter() - start)

    def timed_compute(*args: object) -> None:
        start = time.perf_counter()
        compute(*args)
        times["compute"].append(time.perf_counter() - start)

    worker_cluster._WorkerRun.catch_up = timed_catch_up
    worker_cluster.compute = timed_compute
    worker_cluster._bench_installed = True


def _take_timers() -> dict[str, list[float]]:
    from nassau.store import cluster as worker_cluster

    times = worker_cluster._bench_times
    taken = {key: list(values) for key, values in times.items()}
    for values in times.values():
        values.clear()
    return taken


def instrumented_run(c: cluster.Cluster, stem: int, max_s: int) -> dict[str, float]:
    spec = read_spec("S_2")
    module = module_from_spec(spec)
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    c.client.run(_install_timers)
    c.client.run(_take_timers)
    with tempfile.TemporaryDirectory() as tmp:
        store = SaveDir(Path(tmp) / "save", spec, module, "nassau")
        store.open(region)
        store.lock()
        start = time.perf_counter()
        resolve(module, region, "nassau", store=store, executor=c)
        wall = time.perf_counter() - start
        store.close()
        per_worker = c.client.run(_take_timers)
        fresh = SaveDir(Path(tmp) / "save", spec, module, "nassau")
        res = Resolution(resolved_module(module, "nassau"))
        res.algebra.extend(region.t_limit - module.min_degree + 1)
        start = time.perf_counter()
        fresh.load_into(res)
        full_load = time.perf_counter() - start
        size = sum(f.stat().st_size for f in (Path(tmp) / "save" / "bidegrees").glob("*.bin"))
    loads = [x for w in per_worker.values() for x in w["load"]]
    computes = [x for w in per_worker.values() for x in w["compute"]]
    return {"wall": wall, "jobs": len(region.bidegrees()), "load": sum(loads), "compute": sum(computes),
            "load_median": statistics.median(loads), "load_max_worker": max(sum(w["load"]) for w in per_worker.values()),
            "full_load": full_load, "mib": size / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stem", type=int, default=100)
    ap.add_argument("--max-s", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--overhead-stems", type=int, nargs=2, default=[60, 80], metavar=("N1", "N2"))
    ap.add_argument("--skip-whole", action="store_true", help="only the overhead part (2-4)")
    ap.add_argument("--work-150", type=float, metavar="W",
                    help="the work W of stem 150 in seconds, measured (bench_scaling.py --stems 150 prints it) "
                         "rather than extrapolated from the overhead stems, which falls short")
    ap.add_argument("--max-s-150", type=int, help="the s bound of that work (default: --max-s)")
    args = ap.parse_args()
    print(f"# {machine()}")
    if not args.skip_whole:
        print(f"## S_2 through stem {args.stem}, s <= {args.max_s} (Nassau's algorithm), {args.repeat} runs each")
        for how in (["--threads", "2"], ["--workers", "2"]):
            whole_run(30, 10, how)  # warm-up: numba's cache, the interpreter's files
            times = [whole_run(args.stem, args.max_s, how) for _ in range(args.repeat)]
            print(f"{' '.join(how):12s} {spread(times)}")
    with cluster.Cluster(workers=2) as c:
        c.client.run(_install_timers)
        chains, flats = zip(*(round_trips(c, 300) for _ in range(args.repeat)), strict=True)
        per_task = statistics.median(flats)
        print(f"## per task on a local cluster of 2 processes, {args.repeat} runs of 300 no-op tasks")
        print(f"dependent chain: {1e3 * statistics.median(chains):.2f} ms median (min {1e3 * min(chains):.2f})")
        print(f"independent:     {1e3 * statistics.median(flats):.2f} ms median (min {1e3 * min(flats):.2f})")
        instrumented_run(c, 20, 6)  # warm-up of the workers' kernels
        found = {}
        for stem in args.overhead_stems:
            max_s = min(args.max_s, stem // 2 + 5)
            r = found[stem] = instrumented_run(c, stem, max_s)
            print(f"## stem {stem}, s <= {max_s}: {r['jobs']} jobs, {r['wall']:.1f} s on 2 workers, {r['mib']:.1f} "
                  f"MiB saved")
            print(f"workers computing {r['compute']:.1f} s, catching up (loading inputs) {r['load']:.1f} s = "
                  f"{100 * r['load'] / (r['load'] + r['compute']):.0f}% of their busy time; "
                  f"{1e3 * r['load_median']:.2f} ms median per job")
            print(f"idle or in the scheduler: {2 * r['wall'] - r['load'] - r['compute']:.1f} worker-seconds = "
                  f"{1e3 * (2 * r['wall'] - r['load'] - r['compute']) / r['jobs']:.1f} ms per job")
            print(f"loading the whole directory into one resolution: {r['full_load']:.2f} s")
    (n1, a), (n2, b) = found.items()
    power = {key: math.log(b[key] / a[key]) / math.log(n2 / n1) for key in ("compute", "full_load")}
    w150, l150 = (b[key] * (150 / n2) ** power[key] for key in ("compute", "full_load"))
    w150 = args.work_150 or w150
    max_s = args.max_s_150 or min(args.max_s, 150 // 2 + 5)
    bidegrees = Region(max_s=max_s, min_degree=0, max_stem=150).bidegrees()
    tasks = len(cluster.runs(bidegrees, dependencies("nassau"))[0])
    print(f"## estimate for stem 150, s <= {max_s} (power laws through stems {n1} and {n2}: W ~ n^"
          f"{power['compute']:.1f}, L ~ n^{power['full_load']:.1f})")
    print(f"computation W = {w150:.0f} s ({'measured' if args.work_150 else 'extrapolated'}); loading the whole "
          f"resolution L = {l150:.1f} s per worker")
    for what, jobs in ((f"runs of {cluster.RUN} bidegrees", tasks), ("one bidegree each", len(bidegrees))):
        print(f"{what}: {jobs} tasks x {1e3 * per_task:.1f} ms = {jobs * per_task:.1f} s through the scheduler; "
              f"scaling stops near P* = W / max(J c, L) = {w150 / max(jobs * per_task, l150):.0f} workers")

if __name__ == "__main__":
    main()
