"""GPU benchmark, one command on a GPU machine, within about 10 minutes:

    .venv/bin/python benchmarks/bench_gpu.py            # [--stems 90 100 110] [--max-s 30] [--budget 540]
    .venv/bin/python benchmarks/bench_gpu.py --stems --rref-sizes 8192 16384 --json FILE   # row reduction alone

1. Row reduction: fp's M4RI (CPU) against gpu.rref on half-rank square matrices of 4096, 8192 and 16384
   columns, min of 3 runs each after a warm-up, with the results compared bit for bit.
2. Whole charts: `nassau resolve S_2 --stem N --max-s 30 --algorithm nassau --quiet --json FILE` with
   NASSAU_GPU=0 and =1 (the latter with NASSAU_GPU_DEBUG=1 for its launch/upload/device-memory summary), each
   as a subprocess: wall time, its own peak RSS (os.wait4), and whether stdout and the JSON are byte-identical.
   A run that would not fit the remaining budget is skipped and reported as such.

Without CuPy or a device it says why and measures the CPU side only. --json FILE also writes the figures.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fp.m4ri import row_reduce  # noqa: E402
from fp.packed import random_matrix  # noqa: E402
from gpu import counters, device  # noqa: E402
from gpu.rref import reduce_on_device  # noqa: E402

MB = 1 << 20


def machine(dev: device.Device | None) -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = dev.name if dev is not None else "no GPU"
    return f"{platform.node()}: {cpu}, {os.cpu_count()} cores; {gpu}"


def open_device() -> tuple[device.Device | None, str]:
    os.environ["NASSAU_GPU"] = "auto"
    device.reset()
    try:
        dev = device.current()
    except Exception as exc:  # a broken CUDA install
        return None, f"{exc.__class__.__name__}: {exc}"
    return dev, device.unavailable_reason()


# -- row reduction --------------------------------------------------------------------------------------
def half_rank(n: int, rng: np.random.Generator) -> np.ndarray:
    """n x n of rank <= n/2: half random rows, the other half XORs of random pairs of them, shuffled."""
    base = random_matrix(n // 2, n, rng)
    pairs = rng.integers(0, n // 2, size=(n - n // 2, 2))
    a = np.concatenate([base, base[pairs[:, 0]] ^ base[pairs[:, 1]]])
    return np.ascontiguousarray(a[rng.permutation(n)])


def best_of(runs: int, reduce, a: np.ndarray, n: int) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(min s, max s, reduced matrix, pivots) over `runs` reductions of fresh copies of `a`."""
    times = []
    for _ in range(runs):
        b = a.copy()
        t = time.perf_counter()
        pivots = reduce(b, n)
        times.append(time.perf_counter() - t)
    return min(times), max(times), b, pivots


def rref_rows(dev: device.Device | None, sizes: list[int], runs: int = 3) -> list[dict]:
    """Per size n: {n, rank, cpu_min, cpu_max, and with a device gpu_min, gpu_max, identical} (seconds; identical:
    the device's reduced matrix and pivots equal M4RI's bit for bit)."""
    rng = np.random.default_rng(2024)
    warm = random_matrix(300, 300, rng)
    row_reduce(warm.copy(), 300)
    if dev is not None:
        reduce_on_device(dev, warm.copy(), 300)
    rows = []
    for n in sizes:
        a = half_rank(n, rng)
        cpu_min, cpu_max, cpu_a, cpu_p = best_of(runs, row_reduce, a, n)
        row = {"n": n, "rank": len(cpu_p), "cpu_min": cpu_min, "cpu_max": cpu_max}
        if dev is not None:
            gpu_min, gpu_max, gpu_a, gpu_p = best_of(runs, functools.partial(reduce_on_device, dev), a, n)
            row.update(gpu_min=gpu_min, gpu_max=gpu_max,
                       identical=bool(np.array_equal(cpu_a, gpu_a) and np.array_equal(cpu_p, gpu_p)))
        rows.append(row)
    return rows


def rref_lines(rows: list[dict]) -> list[str]:
    lines = [f"{'n':>6} {'rank':>6} {'CPU M4RI s':>16} {'GPU s':>16} {'speed-up':>8}  identical"]
    for r in rows:
        cpu = f"{r['n']:>6} {r['rank']:>6} {r['cpu_min']:>7.3f} ({r['cpu_max']:6.3f})"
        if "gpu_min" not in r:
            lines.append(f"{cpu} {'n/a':>16} {'':>8}  n/a")
            continue
        lines.append(f"{cpu} {r['gpu_min']:>7.3f} ({r['gpu_max']:6.3f}) {r['cpu_min'] / r['gpu_min']:>7.2f}x  "
                     f"{'yes' if r['identical'] else 'NO'}")
    return lines


# -- whole charts ---------------------------------------------------------------------------------------
@dataclass
class Run:
    stem: int
    gpu: bool
    wall: float = 0.0
    rss_mb: float = 0.0
    rc: int | None = None
    stdout: bytes = b""
    json: bytes = b""
    summary: dict[str, int] = field(default_factory=dict)
    note: str = ""


def run_chart(stem: int, max_s: int, gpu: bool, timeout: float, workdir: Path, extra: tuple[str, ...] = (),
              env_extra: dict[str, str] | None = None) -> Run:
    """One CLI run as a subprocess, killed after `timeout` s (extra: further options such as --threads 16;
    env_extra: further variables such as NASSAU_GPU_VERIFY=1)."""
    run = Run(stem, gpu)
    json_path = workdir / f"s{stem}-{int(gpu)}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NASSAU_GPU")}
    env["NASSAU_GPU"] = "1" if gpu else "0"
    if gpu:
        env["NASSAU_GPU_DEBUG"] = "1"
    env.update(env_extra or {})
    cmd = [sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", str(stem), "--max-s", str(max_s),
           "--algorithm", "nassau", "--quiet", "--json", str(json_path), *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        run.wall = time.perf_counter() - start
        run.rss_mb = usage.ru_maxrss / 1024  # KiB on Linux
        run.rc = proc.returncode
        out.seek(0)
        err.seek(0)
        run.stdout, stderr = out.read(), err.read().decode(errors="replace")
    if run.rc != 0:
        run.note = "timed out" if run.wall >= timeout else f"exit {run.rc}: {stderr.strip()[-200:]}"
    if json_path.exists():
        run.json = json_path.read_bytes()
    match = re.search(re.escape(counters.SUMMARY_PREFIX) + r"(.*)", stderr)
    if match:
        run.summary = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}
    return run


def identical(cpu: Run, gpu: Run) -> bool | None:
    """Whether the two runs printed and wrote the same bytes (None unless both finished)."""
    if cpu.rc != 0 or gpu.rc != 0:
        return None
    return cpu.stdout == gpu.stdout and cpu.json == gpu.json


def chart_lines(runs: list[Run]) -> list[str]:
    lines = [f"{'stem':>5} {'path':>4} {'wall s':>8} {'RSS MB':>8} {'dev MB':>8} {'launches':>9} {'up MB':>8}"
             f"  identical"]
    by_stem: dict[int, dict[bool, Run]] = {}
    for r in runs:
        by_stem.setdefault(r.stem, {})[r.gpu] = r
    for stem, pair in sorted(by_stem.items()):
        for gpu in (False, True):
            r = pair.get(gpu)
            if r is None:
                continue
            s = r.summary
            same = {None: "", True: "yes", False: "NO"}[identical(pair[False], r) if gpu and False in pair else None]
            dev_mb = f"{s['peak_pool_bytes'] / MB:8.0f}" if "peak_pool_bytes" in s else f"{'-':>8}"
            launches = f"{s['launches']:>9}" if "launches" in s else f"{'-':>9}"
            up = f"{s['bytes_uploaded'] / MB:8.1f}" if "bytes_uploaded" in s else f"{'-':>8}"
            wall = f"{r.wall:8.1f}" if r.rc is not None else f"{'-':>8}"
            lines.append(f"{stem:>5} {'gpu' if gpu else 'cpu':>4} {wall} {r.rss_mb:8.0f} {dev_mb} {launches} {up}"
                         f"  {same} {r.note}".rstrip())
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stems", type=int, nargs="*", default=[90, 100, 110])
    parser.add_argument("--max-s", type=int, default=30)
    parser.add_argument("--rref-sizes", type=int, nargs="*", default=[4096, 8192, 16384])
    parser.add_argument("--budget", type=float, default=540.0, help="seconds for the whole benchmark")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    t0 = time.perf_counter()
    dev, reason = open_device()
    print(f"machine: {machine(dev)}", flush=True)
    if dev is None:
        print(f"no device: {reason}. Measuring the CPU side only.", flush=True)
    print("\nrow reduction, half-rank n x n (min of 3, max in parentheses):", flush=True)
    rref = rref_rows(dev, args.rref_sizes)
    for line in rref_lines(rref):
        print(line, flush=True)
    figures = {"machine": machine(dev), "device": dev.name if dev is not None else None, "reason": reason,
               "rref": rref, "charts": []}
    runs: list[Run] = []
    last_pair = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for stem in args.stems:
            for gpu in (False, True) if dev is not None else (False,):
                left = args.budget - (time.perf_counter() - t0)
                # A larger stem takes longer than the last one: skip when it clearly cannot finish.
                if left < 30 or (last_pair and left < 1.2 * last_pair):
                    runs.append(Run(stem, gpu, note=f"skipped: {left:.0f} s of the budget left"))
                    continue
                run = run_chart(stem, args.max_s, gpu, left, Path(tmp))
                runs.append(run)
                last_pair = run.wall
                print(f"  stem {stem} {'gpu' if gpu else 'cpu'}: {run.wall:.1f} s {run.note}", flush=True)
    print(f"\nS_2 charts, s <= {args.max_s}, nassau algorithm (RSS: the run's own peak; dev MB: CuPy pool peak):")
    for line in chart_lines(runs):
        print(line)
    if args.json:
        figures["charts"] = [{"stem": r.stem, "gpu": r.gpu, "wall": r.wall, "rss_mb": r.rss_mb, "rc": r.rc,
                              "summary": r.summary, "note": r.note} for r in runs]
        args.json.write_text(json.dumps(figures, indent=1))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
