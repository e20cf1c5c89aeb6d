"""How far a resolution can scale past two cores, predicted from a trace of a real run.

    python benchmarks/bench_scaling.py --stems 100 120 --threads 2

One in-process run per stem (S_2 by default, every s: s <= stem / 2 + 3, the algorithm `auto` picks) on the
threaded scheduler, with each job's thread CPU time and wall time recorded. The jobs and their dependencies are the
scheduler's graph (engine.dependencies), so from the trace:

    W = sum of the jobs' CPU times (the work), D = the heaviest dependency chain (the critical path),

and no schedule on K cores can beat max(W / K, D). The report gives that bound for K = 2 .. 32 beside the measured
wall time at the run's own K, the speed-up bound W / max(W / K, D), peak RSS, and the heaviest jobs on the critical
path. CPU time, not wall, weighs a job: with two busy cores a job's wall time includes waits for the GIL and for
the other core.

A Nassau step splits: the quasi-inverses of its signature blocks are pieces (nassau.engine.prefetch) that idle workers
compute ahead of the step. Each piece's CPU time is recorded too, so the report gives a second bound with split
jobs, weighing a step as its serial part (everything but the pieces) plus its largest piece. That over-estimates
the split step's chain (the pieces and the corrections using them overlap), so the second bound is safe.

    python benchmarks/bench_scaling.py --stems 150 --gil-stem 120

The bound ignores what serialises threads: the interpreter lock (GIL), held by Python glue, allocation and any
compiled call without `nogil`. --gil-stem N measures its share g of a one-thread CLI run of the module through
stem N (every s): `py-spy record --gil` keeps only the samples of a thread holding the lock, a plain
`py-spy record` of a second run every sample of the working thread, and g is their ratio (py-spy must be
installed: pip install py-spy). The prediction for K cores then counts both the lock and the critical path:

    threads:   T_K = max(D_split, g W + (1 - g) W / K)      (Amdahl's law for the locked share, and the chain)
    processes: T_K = max(D, W / K)                           (no shared lock; a step's pieces stay on its worker)

and the speed-up W / T_K. Worker processes add the catching up on other workers' results (0.16 s of a 16 s run at
stem 90, nassau.engine.processes) and the products a worker enumerates while another fills their table, which
the prediction leaves out.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402


def traced_run(module_name: str, stem: int, max_s: int, threads: int) -> tuple[dict, dict, str, float]:
    """Resolve in this process on `threads` threads; ({(s, t): (cpu s, wall s)} of the job's own thread,
    {(s, t): [(piece cpu s, ran on the job's thread)]}, algorithm, wall s)."""
    import nassau.engine.nassau_step as nassau_step
    import nassau.engine.resolve as engine
    from algebra.module.loader import load_module
    from nassau.engine.prefetch import Prefetch
    from nassau.engine.region import Region

    module = load_module(module_name)
    algorithm = engine.choose_algorithm(module, "auto")
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    durations: dict[tuple[int, int], tuple[float, float]] = {}
    pieces: dict[tuple[int, int], list[tuple[float, bool]]] = {}
    lock = threading.Lock()
    here = threading.local()
    compute = engine.compute

    def timed(res, region, algorithm, s, t, store=None):
        here.job = (s, t)
        c0, w0 = time.thread_time(), time.perf_counter()
        compute(res, region, algorithm, s, t, store)
        c1, w1 = time.thread_time(), time.perf_counter()
        with lock:
            durations[(s, t)] = (c1 - c0, w1 - w0)

    class TimedPrefetch(Prefetch):
        def __init__(self, tasks):
            job, owner = here.job, threading.get_ident()

            def timed_piece(task):
                def run():
                    c0 = time.thread_time()
                    result = task()
                    with lock:
                        pieces.setdefault(job, []).append((time.thread_time() - c0, threading.get_ident() == owner))
                    return result
                return run
            super().__init__([timed_piece(task) for task in tasks])

    engine.compute, nassau_step.Prefetch = timed, TimedPrefetch
    try:
        start = time.perf_counter()
        engine.resolve(module, region, algorithm, threads)
        wall = time.perf_counter() - start
    finally:
        engine.compute, nassau_step.Prefetch = compute, Prefetch
    return durations, pieces, algorithm, wall


def report_bound(work: float, depth: float, cores: list[int]) -> None:
    print("   K   bound max(W/K, D) s   speed-up bound W / bound")
    for k in cores:
        bound = max(work / k, depth)
        print(f"{k:4d} {bound:21.1f} {work / bound:27.2f}")


def gil_share(module_name: str, stem: int, keep: Path | None = None) -> tuple[float, int, int]:
    """(g, samples holding the lock, samples of the working thread) of one-thread CLI runs through `stem`, every s:
    one run sampled by `py-spy record --gil`, one by a plain `py-spy record` (start-up and kernel loading
    included). keep: a directory to leave both runs' samples in (py-spy's raw format: stack, count)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("--gil-stem needs py-spy: pip install py-spy")
    counts = []
    for name, extra in (("gil", ["--gil"]), ("all", [])):
        with tempfile.TemporaryDirectory() as tmp:
            raw = (keep or Path(tmp)) / f"{module_name}-{stem}-{name}.txt"
            cmd = [spy, "record", "--format", "raw", "--output", str(raw), *extra, "--",
                   sys.executable, "-m", "nassau", "resolve", module_name, "--stem", str(stem), "--max-s",
                   str(stem // 2 + 3), "--threads", "1", "--quiet"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            counts.append(sum(int(line.rsplit(" ", 1)[1]) for line in raw.read_text().splitlines() if line.strip()))
    held, active = counts
    return held / active, held, active


def report_prediction(work: float, depth: float, split_depth: float, g: float, cores: list[int]) -> None:
    print(f"   K   threads: max(D_split, g W + (1 - g) W / K), g = {g:.3f}   processes: max(D, W / K)")
    for k in cores:
        threads = max(split_depth, g * work + (1 - g) * work / k)
        procs = max(depth, work / k)
        print(f"{k:4d} {threads:12.1f} s = {work / threads:5.2f}x {'':30s} {procs:8.1f} s = {work / procs:5.2f}x")


def critical_path(weights: dict, deps) -> tuple[float, list[tuple[int, int]]]:
    """The heaviest chain of the DAG (a job counts after all its dependencies inside the job set), and its jobs."""
    finish: dict[tuple[int, int], float] = {}
    before: dict[tuple[int, int], tuple[int, int] | None] = {}
    for job in sorted(weights, key=lambda b: (b[1], b[0])):  # dependencies have smaller t, or equal t and smaller s
        inside = [d for d in deps(*job) if d in weights]
        prev = max(inside, key=lambda d: finish[d], default=None)
        finish[job] = weights[job] + (finish[prev] if prev is not None else 0.0)
        before[job] = prev
    last = max(finish, key=finish.get)
    chain = [last]
    while before[chain[-1]] is not None:
        chain.append(before[chain[-1]])
    return finish[last], chain[::-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="S_2")
    ap.add_argument("--stems", type=int, nargs="+", default=[100, 120])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cores", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    ap.add_argument("--gil-stem", type=int, help="measure the lock's share g on a one-thread run through this stem")
    ap.add_argument("--gil-samples", type=Path, help="a directory to keep the py-spy samples of --gil-stem in")
    ap.add_argument("--gil-only", action="store_true", help="measure g only, no traced runs")
    args = ap.parse_args()
    from nassau.engine.resolve import dependencies

    print(f"# machine: {machine()}")
    g = None
    if args.gil_stem is not None:
        g, held, active = gil_share(args.module, args.gil_stem, args.gil_samples)
        print(f"## the interpreter lock, one thread, {args.module} through stem {args.gil_stem} (every s)")
        print(f"g = {g:.3f}: {held} samples holding it (py-spy --gil) of {active} of the working thread (py-spy)")
        if args.gil_only:
            return
    for stem in args.stems:
        max_s = stem // 2 + 3
        trace, pieces, algorithm, wall = traced_run(args.module, stem, max_s, args.threads)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # A job's work: its own thread's CPU time and the pieces helpers computed for it.
        cpu = {job: c + sum(p for p, own in pieces.get(job, ()) if not own) for job, (c, _) in trace.items()}
        split = {job: w - sum(p for p, _ in pieces.get(job, ())) + max((p for p, _ in pieces.get(job, ())),
                                                                       default=0.0) for job, w in cpu.items()}
        work = sum(cpu.values())
        depth, chain = critical_path(cpu, dependencies(algorithm))
        print(f"\n## {args.module} through stem {stem}, s <= {max_s} ({algorithm}, {len(cpu)} jobs)")
        print(f"measured: {args.threads} threads, wall {wall:.1f} s, peak RSS {rss:.0f} MiB (this process so far)")
        print(f"W = {work:.1f} s of job CPU time, D = {depth:.1f} s (critical path of {len(chain)} jobs, whole jobs)")
        report_bound(work, depth, args.cores)
        split_depth, split_chain = critical_path(split, dependencies(algorithm))
        print(f"split steps (serial part + largest piece): D = {split_depth:.1f} s ({len(split_chain)} jobs); "
              f"{sum(len(p) for p in pieces.values())} pieces, {sum(p for v in pieces.values() for p, _ in v):.1f} s")
        report_bound(work, split_depth, args.cores)
        if g is not None:
            print(f"prediction counting the lock (g from stem {args.gil_stem}) and the critical path:")
            report_prediction(work, depth, split_depth, g, args.cores)
        heavy = sorted(chain, key=lambda b: -cpu[b])[:8]
        print("heaviest jobs on the critical path (s, t): CPU s  ->  " +
              ", ".join(f"({s}, {t}): {cpu[(s, t)]:.2f}" for s, t in heavy))
        top = sorted(cpu, key=lambda b: -cpu[b])[:8]
        print("heaviest jobs overall (s, t): CPU s  ->  " + ", ".join(f"({s}, {t}): {cpu[(s, t)]:.2f}" for s, t in top))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
