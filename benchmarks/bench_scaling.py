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
    processes: T_K = max(D_relay, (W + R + (K - 1) A) / K, C_K)   (no shared lock; pieces travel, at a cost)

and the speed-up W / T_K. Worker processes share a step's pieces (nassau.engine.shared_pieces): a helper writes a
piece into its owner's inbox in shared memory and a short notice travels from it through the coordinator to the
owner. Their costs are measured here: a probe relays messages from one forked process through this one to another,
as a run does (latency, the CPU of all three processes and of this one, for a notice and for a job's result), and
another times writing b bytes into fresh shared memory (w per byte, page faults included). With each piece's result
size from the trace, D_relay is the split chain with each step's largest piece weighed p + notice latency + w b; R
is every piece shared (notice CPU + w b each); A is what one worker spends catching up on every other worker's
results (measured by adding all of them to a fresh copy), which each of the K - 1 others pays; and C_K is the
coordinator's own work, which one process does alone: every notice relayed, a message for every result received
and every job handed out, and every result pickled for each of the K - 1 other workers. The products a worker
enumerates while another fills their table are left out.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402


def traced_run(module_name: str, stem: int, max_s: int, threads: int) -> tuple[dict, dict, dict, str, float, float]:
    """Resolve in this process on `threads` threads; ({(s, t): (cpu s, wall s)} of the job's own thread,
    {(s, t): [(piece cpu s, ran on the job's thread, result bytes)]}, {(s, t): bytes of its result}, algorithm,
    wall s, and the CPU s a worker process spends catching up on every result: adding them all to a fresh copy)."""
    import nassau.engine.nassau_step as nassau_step
    import nassau.engine.resolve as engine
    from algebra.module.loader import load_module
    from nassau.engine.prefetch import Prefetch
    from nassau.engine.region import Region
    from nassau.engine.resolution import Resolution

    module = load_module(module_name)
    algorithm = engine.choose_algorithm(module, "auto")
    region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=stem)
    durations: dict[tuple[int, int], tuple[float, float]] = {}
    pieces: dict[tuple[int, int], list[tuple[float, bool, int]]] = {}
    results: dict[tuple[int, int], int] = {}
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
            results[(s, t)] = res.added(s, t).rows.nbytes

    class TimedPrefetch(Prefetch):
        def __init__(self, tasks, recipes=None):
            job, owner = here.job, threading.get_ident()

            def timed_piece(task):
                def run():
                    c0 = time.thread_time()
                    result = task()
                    inverse, image = result
                    size = image.nbytes + inverse.preimage.nbytes + inverse.pivots.nbytes
                    with lock:
                        pieces.setdefault(job, []).append((time.thread_time() - c0, threading.get_ident() == owner,
                                                           size))
                    return result
                return run
            super().__init__([timed_piece(task) for task in tasks], recipes)

    engine.compute, nassau_step.Prefetch = timed, TimedPrefetch
    try:
        start = time.perf_counter()
        res = engine.resolve(module, region, algorithm, threads)
        wall = time.perf_counter() - start
    finally:
        engine.compute, nassau_step.Prefetch = compute, Prefetch
    copy = Resolution(module, algorithm)
    adds = [res.added(s, t) for t, s in sorted((t, s) for s, t in durations)]
    c0 = time.process_time()
    for added in adds:
        copy.add(added)
    return durations, pieces, results, algorithm, wall, time.process_time() - c0


def _relay_end(conn, role: str, sizes: list[int], rounds: int) -> None:
    """A forked end of the relay probe: the helper sends a stamped payload of each size, `rounds` times, as a piece
    travels; the owner unpickles each and answers with its arrival time."""
    import pickle

    import numpy as np

    for size in sizes:
        for _ in range(rounds):
            if role == "helper":
                result = (np.ones(size // 8, dtype=np.uint64), time.monotonic())
                conn.send(("piece", 0, pickle.dumps((1, 0, result, True), protocol=pickle.HIGHEST_PROTOCOL)))
                conn.recv()  # one message in flight at a time
            else:
                _, payload = conn.recv()
                _, _, (_, sent), _ = pickle.loads(payload)
                conn.send(time.monotonic() - sent)
    conn.send(resource.getrusage(resource.RUSAGE_SELF))


def relay_probe(sizes: list[int], rounds: int = 30) -> dict[int, tuple[float, float, float]]:
    """{bytes: (latency s, CPU s of the three processes, CPU s of this one)} per piece relayed from a forked helper
    through this process to a forked owner, medians of `rounds` (CPU: means)."""
    import multiprocessing
    import statistics

    ctx = multiprocessing.get_context("fork")
    ends = [ctx.Pipe() for _ in range(2)]
    procs = [ctx.Process(target=_relay_end, args=(ends[k][1], role, sizes, rounds))
             for k, role in enumerate(("helper", "owner"))]
    for proc in procs:
        proc.start()
    helper, owner = ends[0][0], ends[1][0]
    out, cpu_here = {}, []
    for size in sizes:
        latencies = []
        here0 = time.process_time()
        for _ in range(rounds):
            kind, _, payload = helper.recv()
            owner.send((kind, payload))
            latencies.append(owner.recv())
            helper.send(None)
        cpu_here.append((time.process_time() - here0) / rounds)
        out[size] = [statistics.median(latencies), 0.0, cpu_here[-1]]
    usage = [end.recv() for end in (helper, owner)]
    for proc in procs:
        proc.join()
    # The forked ends' CPU is known in all only: share it over the sizes by their bytes (copies cost by the byte).
    theirs = sum(u.ru_utime + u.ru_stime for u in usage) / rounds
    total = sum(sizes)
    for size in sizes:
        out[size][1] = out[size][2] + theirs * size / total
    return {size: tuple(v) for size, v in out.items()}


def copy_probe(size: int, rounds: int = 5) -> float:
    """Seconds per byte to write `size` bytes into fresh shared memory (a new mapping each time, so that its page
    faults count, as after an inbox half is given back): the median of `rounds`."""
    import mmap
    import statistics

    import numpy as np

    data = np.ones(max(size, 1 << 20), dtype=np.uint8)
    times = []
    for _ in range(rounds):
        target = np.frombuffer(mmap.mmap(-1, len(data)), dtype=np.uint8)
        start = time.perf_counter()
        target[:] = data
        times.append(time.perf_counter() - start)
    return statistics.median(times) / len(data)


def fit(points: dict[int, tuple], at: int) -> callable:
    """b -> a + slope b through the probe's smallest and largest sizes, for column `at`."""
    lo, hi = min(points), max(points)
    slope = (points[hi][at] - points[lo][at]) / (hi - lo)
    return lambda b: max(points[lo][at] + slope * (b - lo), points[lo][at])


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


def report_prediction(work: float, split_depth: float, g: float, relay_depth: float, relayed: float,
                      catch_up: float, coordinator: Callable[[int], float], cores: list[int]) -> None:
    print(f"   K   threads: max(D_split, g W + (1 - g) W / K), g = {g:.3f}   "
          "processes: max(D_relay, (W + R + (K - 1) A) / K, C_K)")
    for k in cores:
        threads = max(split_depth, g * work + (1 - g) * work / k)
        procs = max(relay_depth, (work + relayed + (k - 1) * catch_up) / k, coordinator(k))
        print(f"{k:4d} {threads:12.1f} s = {work / threads:5.2f}x {'':30s} {procs:8.1f} s = {work / procs:5.2f}x"
              f"   (C_K = {coordinator(k):.1f} s)")


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
        trace, pieces, results, algorithm, wall, catch_up = traced_run(args.module, stem, max_s, args.threads)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # A job's work: its own thread's CPU time and the pieces helpers computed for it.
        cpu = {job: c + sum(p for p, own, _ in pieces.get(job, ()) if not own) for job, (c, _) in trace.items()}
        split = {job: w - sum(p for p, _, _ in pieces.get(job, ())) + max((p for p, _, _ in pieces.get(job, ())),
                                                                          default=0.0) for job, w in cpu.items()}
        work = sum(cpu.values())
        depth, chain = critical_path(cpu, dependencies(algorithm))
        print(f"\n## {args.module} through stem {stem}, s <= {max_s} ({algorithm}, {len(cpu)} jobs)")
        print(f"measured: {args.threads} threads, wall {wall:.1f} s, peak RSS {rss:.0f} MiB (this process so far)")
        print(f"W = {work:.1f} s of job CPU time, D = {depth:.1f} s (critical path of {len(chain)} jobs, whole jobs)")
        report_bound(work, depth, args.cores)
        split_depth, split_chain = critical_path(split, dependencies(algorithm))
        every = [piece for v in pieces.values() for piece in v]
        print(f"split steps (serial part + largest piece): D = {split_depth:.1f} s ({len(split_chain)} jobs); "
              f"{len(every)} pieces, {sum(p for p, _, _ in every):.1f} s")
        report_bound(work, split_depth, args.cores)
        if g is not None:
            sizes = sorted(b for _, _, b in every) or [0]
            probe = relay_probe([1 << 10, max(1 << 11, max(results.values()))])
            notice = probe[1 << 10]
            per_byte = copy_probe(sizes[-1])
            pipe_here = fit(probe, 2)
            print(f"a notice relayed (probe, median): latency {notice[0] * 1e3:.2f} ms, CPU {notice[1] * 1e3:.2f} ms "
                  f"({notice[2] * 1e3:.2f} ms here); writing to shared memory {1 / per_byte / 1e9:.2f} GB/s; piece "
                  f"results: median {sizes[len(sizes) // 2]} bytes, largest {sizes[-1]}, "
                  f"{sum(sizes) / 1e9:.1f} GB in all; job results: {sum(results.values()) / 1e6:.1f} MB in all")
            relay_split = {job: w - sum(p for p, _, _ in pieces.get(job, ())) +
                           max((p + notice[0] + per_byte * b for p, _, b in pieces.get(job, ())), default=0.0)
                           for job, w in cpu.items()}
            relay_depth, _ = critical_path(relay_split, dependencies(algorithm))
            relayed = len(every) * notice[1] + per_byte * sum(sizes)
            fixed, pickled = pipe_here(0), pipe_here(1) - pipe_here(0)

            def coordinator(k: int) -> float:
                """Relaying every notice, receiving every result and handing out every job (a message each), and
                pickling every result once for each other worker."""
                return (len(every) * notice[2] + 2 * fixed * len(results) +
                        (k - 1) * pickled * sum(results.values()))

            print(f"D_relay = {relay_depth:.1f} s, R = {relayed:.1f} s (every piece shared); a worker catches up "
                  f"on every result in A = {catch_up:.1f} s")
            print(f"prediction counting the lock (g from stem {args.gil_stem}) and the critical path:")
            report_prediction(work, split_depth, g, relay_depth, relayed, catch_up, coordinator, args.cores)
        heavy = sorted(chain, key=lambda b: -cpu[b])[:8]
        print("heaviest jobs on the critical path (s, t): CPU s  ->  " +
              ", ".join(f"({s}, {t}): {cpu[(s, t)]:.2f}" for s, t in heavy))
        top = sorted(cpu, key=lambda b: -cpu[b])[:8]
        print("heaviest jobs overall (s, t): CPU s  ->  " + ", ".join(f"({s}, {t}): {cpu[(s, t)]:.2f}" for s, t in top))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
