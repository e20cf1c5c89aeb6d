"""One thread against K threads against K worker processes, on whole CLI runs of one resolution.

    python benchmarks/bench_workers.py --stem 90 --max-s 48 --workers 2 --repeat 3
    python benchmarks/bench_workers.py --stem 120 --max-s 63 --workers 2 --repeat 3 --no-ceiling

Each round runs `python -m nassau resolve MODULE --stem N --max-s S --quiet` four ways, one after another in a
rotating order: `--threads 1`, `--threads K`, `--threads K --processes`, and K copies of the `--threads 1` run at
once (the ceiling, left out by --no-ceiling: what K cores of this machine give K independent runs, with nothing
shared; its speed-up is K one-thread runs' time over theirs at once); every run is a fresh process after one warm-up
run (kernels cached), and every run's chart must be the same bytes. Reported per way: wall seconds (min,
median, max), the peak resident memory of the whole process tree (sampled every 0.2 s: the coordinator and its
workers together, shared pages counted once), the CPU seconds of the process tree (user + system: a one-thread
run's large kernels may use an idle second core, fp.threads), and the speed-up over one thread (the median of the
rounds' ratios, and their spread).

    python benchmarks/bench_workers.py --stem 90 --max-s 48 --workers 2 --repeat 3 --floor

--floor also measures what no number of workers shares, and so the best K workers could do (Amdahl's law):
the start-up, `resolve MODULE --stem 1` (interpreter, imports, kernels loaded, a chart printed; median of 5 runs),
and the light jobs a --processes run does alone before it forks its workers (the jobs in the scheduler's order
until the median of the last processes.LIGHT_JOBS takes processes.LIGHT seconds; each job's wall time from one
in-process one-thread run, benchmarks/bench_scaling.traced_run). With F that serial part and T1 the one-thread
median, K workers take at least F + (T1 - F) / K, so their speed-up is at most T1 / (F + (T1 - F) / K), even with
no overhead at all.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402


def tree_rss_mib(pid: int) -> float:
    """Resident MiB of a process and its children (one level: the workers), shared pages split between the processes
    sharing them (Pss: the product tables are in memory the workers share, counted once, not once per worker)."""
    pids = [pid]
    try:
        pids += [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def children_cpu() -> float:
    """CPU seconds (user + system) of the children waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class RunFailed(SystemExit):
    """A run that failed, timed out or whose copies differ (the benchmark stops with its message)."""


def run(cmd: list[str], copies: int = 1, timeout: float | None = None,
        env: dict[str, str] | None = None) -> tuple[float, float, float, bytes]:
    """(wall s until the last ends, peak tree RSS MiB summed over the copies, CPU s, stdout) of `copies` copies of a
    run started at once (their charts must agree); killed and RunFailed after `timeout` s."""
    cpu = children_cpu()
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env) for _ in range(copies)]
    peaks = [0.0] * copies
    while any(proc.poll() is None for proc in procs):
        if timeout is not None and time.perf_counter() - start > timeout:
            for proc in procs:
                proc.kill()
                proc.wait()
            raise RunFailed(f"timed out after {timeout:.0f} s: {' '.join(cmd)}")
        peaks = [max(peak, tree_rss_mib(proc.pid)) for peak, proc in zip(peaks, procs, strict=True)]
        time.sleep(0.2)
    outs = [proc.stdout.read() for proc in procs]
    wall = time.perf_counter() - start
    if any(proc.returncode != 0 for proc in procs) or len(set(outs)) != 1:
        raise RunFailed(f"run failed or its copies differ: {' '.join(cmd)}")
    return wall, sum(peaks), children_cpu() - cpu, outs[0]


def serial_part(module: str, stem: int, max_s: int) -> tuple[float, float, int]:
    """(start-up s, light jobs' s, light jobs): see --floor in the docstring."""
    from bench_scaling import traced_run

    from nassau.engine.processes import LIGHT, LIGHT_JOBS
    from nassau.engine.resolve import dependencies
    from nassau.engine.scheduler import JobGraph

    startup = statistics.median(run([sys.executable, "-m", "nassau", "resolve", module, "--stem", "1", "--quiet"])[0]
                                for _ in range(5))
    durations, _, _, algorithm, _, _ = traced_run(module, stem, max_s, 1)
    graph = JobGraph(list(durations), dependencies(algorithm))
    light, count, recent = 0.0, 0, []
    while graph.ready:
        job = graph.pop()
        wall = durations[job][1]
        light, count = light + wall, count + 1
        graph.finish(job)
        recent = (recent + [wall])[-LIGHT_JOBS:]
        if len(recent) == LIGHT_JOBS and statistics.median(recent) >= LIGHT:
            break
    return startup, light, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default="S_2")
    ap.add_argument("--stem", type=int, required=True)
    ap.add_argument("--max-s", type=int, required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-ceiling", action="store_true", help="leave out the ceiling way (K one-thread runs at once)")
    ap.add_argument("--floor", action="store_true", help="also the serial part and the best K workers could do")
    args = ap.parse_args()
    base = [sys.executable, "-m", "nassau", "resolve", args.module, "--stem", str(args.stem), "--max-s",
            str(args.max_s), "--quiet"]
    k = args.workers
    ways = {"1 thread": (["--threads", "1"], 1), f"{k} threads": (["--threads", str(k)], 1),
            f"{k} processes": (["--threads", str(k), "--processes"], 1),
            f"{k} one-thread runs at once (ceiling; wall per run)": (["--threads", "1"], k)}
    if args.no_ceiling:
        ways.popitem()
    print(f"machine: {machine()}; {args.module} through stem {args.stem}, s <= {args.max_s}; {args.repeat} rounds",
          flush=True)
    run(base + ["--threads", "1"])  # warm-up: kernels cached
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in ways}
    chart = None
    names = list(ways)
    for r in range(args.repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:
            flags, copies = ways[name]
            wall, peak, cpu, out = run(base + flags, copies)
            wall, cpu = wall / copies, cpu / copies  # per run: the ceiling's speed-up compares throughput
            if chart is None:
                chart = out
            elif out != chart:
                raise SystemExit(f"round {r}: {name} printed another chart")
            results[name].append((wall, peak, cpu))
            print(f"round {r}: {name}: {wall:.2f} s, {peak:.0f} MiB, {cpu:.2f} CPU s", flush=True)
    one = [w for w, _, _ in results["1 thread"]]
    print("\n| way | wall s (min / median / max) | speed-up over 1 thread (median, spread) | CPU s / wall s (median) "
          "| peak MiB |")
    print("| --- | --- | --- | --- | --- |")
    for name, rows in results.items():
        walls = [w for w, _, _ in rows]
        ratios = [a / b for a, b in zip(one, walls, strict=True)]
        print(f"| {name} | {min(walls):.2f} / {statistics.median(walls):.2f} / {max(walls):.2f} | "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{statistics.median(c / w for w, _, c in rows):.2f} | {max(p for _, p, _ in rows):.0f} |")
    if args.floor:
        startup, light, count = serial_part(args.module, args.stem, args.max_s)
        t1, serial = statistics.median(one), startup + light
        best = serial + (t1 - serial) / k
        print(f"\nserial part: start-up {startup:.2f} s (median of 5) + {count} light jobs before the fork "
              f"{light:.2f} s = {serial:.2f} s of the one-thread median {t1:.2f} s; {k} workers take at least "
              f"{best:.2f} s, a speed-up of at most {t1 / best:.2f}x")


if __name__ == "__main__":
    main()
