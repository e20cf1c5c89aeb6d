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
import json
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


def model(module_name: str, stem: int, max_s: int, threads: int, g: float | None = None) -> dict:
    """Trace one run on `threads` threads: its wall time, W, D, D_split and the heaviest jobs, and given the lock's
    share g the prediction's terms too (the relay and copy probes run then). Every figure the report prints."""
    from nassau.engine.resolve import dependencies

    trace, pieces, results, algorithm, wall, catch_up = traced_run(module_name, stem, max_s, threads)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # A job's work: its own thread's CPU time and the pieces helpers computed for it.
    cpu = {job: c + sum(p for p, own, _ in pieces.get(job, ()) if not own) for job, (c, _) in trace.items()}
    split = {job: w - sum(p for p, _, _ in pieces.get(job, ())) + max((p for p, _, _ in pieces.get(job, ())),
                                                                      default=0.0) for job, w in cpu.items()}
    work = sum(cpu.values())
    depth, chain = critical_path(cpu, dependencies(algorithm))
    split_depth, split_chain = critical_path(split, dependencies(algorithm))
    every = [piece for v in pieces.values() for piece in v]
    m = {"module": module_name, "stem": stem, "max_s": max_s, "algorithm": algorithm, "jobs": len(cpu),
         "threads": threads, "wall": wall, "rss_mib": rss, "W": work, "D": depth, "chain_jobs": len(chain),
         "D_split": split_depth, "split_chain_jobs": len(split_chain), "pieces": len(every),
         "pieces_cpu": sum(p for p, _, _ in every),
         "heavy_chain": [(s, t, cpu[(s, t)]) for s, t in sorted(chain, key=lambda b: -cpu[b])[:8]],
         "heavy": [(s, t, cpu[(s, t)]) for s, t in sorted(cpu, key=lambda b: -cpu[b])[:8]]}
    if g is None:
        return m
    sizes = sorted(b for _, _, b in every) or [0]
    probe = relay_probe([1 << 10, max(1 << 11, max(results.values()))])
    notice = probe[1 << 10]
    per_byte = copy_probe(sizes[-1])
    pipe_here = fit(probe, 2)
    relay_split = {job: w - sum(p for p, _, _ in pieces.get(job, ())) +
                   max((p + notice[0] + per_byte * b for p, _, b in pieces.get(job, ())), default=0.0)
                   for job, w in cpu.items()}
    fixed, pickled = pipe_here(0), pipe_here(1) - pipe_here(0)
    # The coordinator's own work: relaying every notice, receiving every result and handing out every job (a
    # message each), and pickling every result once for each of the K - 1 other workers (coord_pickled each).
    m.update(g=g, notice_latency=notice[0], notice_cpu=notice[1], notice_cpu_here=notice[2],
             shm_gbps=1 / per_byte / 1e9, piece_median=sizes[len(sizes) // 2], piece_largest=sizes[-1],
             pieces_gb=sum(sizes) / 1e9, results_mb=sum(results.values()) / 1e6,
             D_relay=critical_path(relay_split, dependencies(algorithm))[0],
             R=len(every) * notice[1] + per_byte * sum(sizes), A=catch_up,
             coord_fixed=len(every) * notice[2] + 2 * fixed * len(results),
             coord_pickled=pickled * sum(results.values()))
    return m


def predictions(m: dict, cores: list[int]) -> dict[int, dict[str, float]]:
    """Per K: the bounds max(W / K, D) and with D_split, and given g the predicted seconds on threads,
    max(D_split, g W + (1 - g) W / K), and on processes, max(D_relay, (W + R + (K - 1) A) / K, C_K)."""
    out = {}
    for k in cores:
        row = {"bound": max(m["W"] / k, m["D"]), "bound_split": max(m["W"] / k, m["D_split"])}
        if "g" in m:
            row["C_K"] = m["coord_fixed"] + (k - 1) * m["coord_pickled"]
            row["threads"] = max(m["D_split"], m["g"] * m["W"] + (1 - m["g"]) * m["W"] / k)
            row["processes"] = max(m["D_relay"], (m["W"] + m["R"] + (k - 1) * m["A"]) / k, row["C_K"])
        out[k] = row
    return out


def report(m: dict, cores: list[int], g_source: str) -> None:
    work = m["W"]
    table = predictions(m, cores)
    print(f"\n## {m['module']} through stem {m['stem']}, s <= {m['max_s']} ({m['algorithm']}, {m['jobs']} jobs)")
    print(f"measured: {m['threads']} threads, wall {m['wall']:.1f} s, peak RSS {m['rss_mib']:.0f} MiB "
          "(this process so far)")
    print(f"W = {work:.1f} s of job CPU time, D = {m['D']:.1f} s (critical path of {m['chain_jobs']} jobs, "
          "whole jobs)")
    report_bound(work, m["D"], cores)
    print(f"split steps (serial part + largest piece): D = {m['D_split']:.1f} s ({m['split_chain_jobs']} jobs); "
          f"{m['pieces']} pieces, {m['pieces_cpu']:.1f} s")
    report_bound(work, m["D_split"], cores)
    if "g" in m:
        print(f"a notice relayed (probe, median): latency {m['notice_latency'] * 1e3:.2f} ms, CPU "
              f"{m['notice_cpu'] * 1e3:.2f} ms ({m['notice_cpu_here'] * 1e3:.2f} ms here); writing to shared memory "
              f"{m['shm_gbps']:.2f} GB/s; piece results: median {m['piece_median']} bytes, largest "
              f"{m['piece_largest']}, {m['pieces_gb']:.1f} GB in all; job results: {m['results_mb']:.1f} MB in all")
        print(f"D_relay = {m['D_relay']:.1f} s, R = {m['R']:.1f} s (every piece shared); a worker catches up "
              f"on every result in A = {m['A']:.1f} s")
        print(f"prediction counting the lock (g {g_source}) and the critical path:")
        print(f"   K   threads: max(D_split, g W + (1 - g) W / K), g = {m['g']:.3f}   "
              "processes: max(D_relay, (W + R + (K - 1) A) / K, C_K)")
        for k, row in table.items():
            print(f"{k:4d} {row['threads']:12.1f} s = {work / row['threads']:5.2f}x {'':30s} "
                  f"{row['processes']:8.1f} s = {work / row['processes']:5.2f}x   (C_K = {row['C_K']:.1f} s)")
    print("heaviest jobs on the critical path (s, t): CPU s  ->  " +
          ", ".join(f"({s}, {t}): {c:.2f}" for s, t, c in m["heavy_chain"]))
    print("heaviest jobs overall (s, t): CPU s  ->  " + ", ".join(f"({s}, {t}): {c:.2f}" for s, t, c in m["heavy"]))
    sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="S_2")
    ap.add_argument("--stems", type=int, nargs="+", default=[100, 120])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cores", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    ap.add_argument("--gil-stem", type=int, help="measure the lock's share g on a one-thread run through this stem")
    ap.add_argument("--gil-share", type=float, help="take g as given (from an earlier --gil-stem) instead")
    ap.add_argument("--gil-samples", type=Path, help="a directory to keep the py-spy samples of --gil-stem in")
    ap.add_argument("--gil-only", action="store_true", help="measure g only, no traced runs")
    ap.add_argument("--json", type=Path, help="also write every stem's figures and predictions to this file")
    args = ap.parse_args()

    print(f"# machine: {machine()}")
    g, g_source = args.gil_share, "given"
    if args.gil_stem is not None:
        g, held, active = gil_share(args.module, args.gil_stem, args.gil_samples)
        g_source = f"from stem {args.gil_stem}"
        print(f"## the interpreter lock, one thread, {args.module} through stem {args.gil_stem} (every s)")
        print(f"g = {g:.3f}: {held} samples holding it (py-spy --gil) of {active} of the working thread (py-spy)")
        if args.gil_only:
            return
    stems = []
    for stem in args.stems:
        m = model(args.module, stem, stem // 2 + 3, args.threads, g)
        report(m, args.cores, g_source)
        stems.append({**m, "g_source": g_source, "predictions": predictions(m, args.cores)})
        if args.json:
            args.json.write_text(json.dumps({"machine": machine(), "stems": stems}, indent=1))


if __name__ == "__main__":
    main()
