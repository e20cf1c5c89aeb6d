"""The cost model against measured runs: predicted wall time, peak memory and save size beside the measured ones.

    python benchmarks/bench_estimate.py                       # the default list (about a minute of runs)
    python benchmarks/bench_estimate.py --runs S_2:90:48 S_2:120:63:2 --repeat 3
    python benchmarks/bench_estimate.py --runs S_2:100:53 tmf2:150:75 --no-save   # on a shared machine
    python benchmarks/bench_estimate.py --motivic --runs S_2:60:33 S_2:70:38 Ctau:90:48 --no-save

Each run is `MODULE:STEM:MAX_S[:THREADS]`. For each, `nassau resolve ... --estimate --json` (the prediction, made
first, calibrating this machine if it never was), then the run itself `--repeat` times in fresh processes with a
fresh save directory each: wall time (start-up included), CPU time (user + sys of the process tree), peak resident
memory (the largest process) and the save directory's bytes. A prediction is within its band when the measured
figure lies within 25% of it. The machine and its load average are printed beside the figures; on a machine shared
with other work compare CPU, not wall, against the prediction (the model's time is that of a run with the cores to
itself: its constants are measured in CPU seconds). The time is judged by the CPU of a one-thread run and by the
wall time (median) of a run on several workers, whose CPU is their sum. `--motivic` makes every run a C-motivic one
(`nassau resolve ... --motivic`, docs/motivic.md).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402

DEFAULT = ["S_2:40:23", "S_2:60:33", "S_2:70:38", "C2:60:33", "tmf2:80:40", "ko:100:50", "S_3:100:15",
           "Joker:60:30"]
BAND = 0.25


def nassau(*args: str) -> list[str]:
    return [sys.executable, "-m", "nassau", *args]


def measured(args: list[str], save: Path | None) -> dict:
    """One run in a child of its own: wall, CPU of its tree, its peak RSS, the save directory's bytes (save None:
    the run keeps no save directory)."""
    if save is None:
        return dict(_run(args), save=0)
    shutil.rmtree(save, ignore_errors=True)
    got = _run([*args, "--save-dir", str(save)])
    got["save"] = sum(p.stat().st_size for p in (save / "bidegrees").iterdir()) if (save / "bidegrees").exists() else 0
    return got


def _run(args: list[str]) -> dict:
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            "w = time.perf_counter() - t; r = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(w, r.ru_utime + r.ru_stime, r.ru_maxrss * 1024)")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, check=True, text=True)
    wall, cpu, peak = out.stdout.split()
    return {"wall": float(wall), "cpu": float(cpu), "peak": int(peak)}


def within(predicted: float, value: float) -> str:
    return "yes" if predicted and abs(value / predicted - 1) <= BAND else "no"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", default=DEFAULT, metavar="MODULE:STEM:MAX_S[:THREADS]")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="also write every figure here")
    ap.add_argument("--motivic", action="store_true", help="C-motivic runs (--motivic) of the modules")
    ap.add_argument("--no-save", action="store_true",
                    help="runs keep no save directory (its synced files wait on the disk, which CPU time does not "
                         "count: compare CPU with the prediction on a shared machine)")
    args = ap.parse_args()
    print(f"# {machine()}; load average {os.getloadavg()[0]:.1f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| run | wall s: predicted (+-) / measured min-med-max | CPU s measured (median) | peak MiB: predicted "
          "(+-) / measured | save KiB: predicted (+-) / measured | within 25%: time (CPU; wall for several "
          "workers), peak, save |")
    print("| --- | --- | --- | --- | --- | --- |")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.runs:
            name, stem, max_s, *rest = spec.split(":")
            threads = rest[0] if rest else "1"
            run = ["resolve", name, "--stem", stem, "--max-s", max_s, "--threads", threads,
                   *(["--motivic"] if args.motivic else [])]
            save = None if args.no_save else Path(tmp) / "save"
            where = [] if save is None else ["--save-dir", str(save)]  # counted by the estimate, which writes nothing
            if save is not None:
                shutil.rmtree(save, ignore_errors=True)
            est = json.loads(subprocess.run(nassau(*run, "--estimate", "--json", *where),
                                            capture_output=True, check=True, text=True).stdout)
            got = [measured(nassau(*run, "--quiet"), save) for _ in range(args.repeat)]
            walls = sorted(g["wall"] for g in got)
            cpu = statistics.median(g["cpu"] for g in got)
            peak = statistics.median(g["peak"] for g in got)
            saved = "-" if save is None else f"{got[0]['save'] / 1024:.0f}"
            saved_ok = "-" if save is None else within(est["save_bytes"], got[0]["save"])
            timed = cpu if threads == "1" else statistics.median(walls)
            row = {"run": spec, "estimate": est, "measured": got}
            rows.append(row)
            kind = " (C-motivic)" if args.motivic else ""
            print(f"| {name}{kind} through stem {stem}, s <= {max_s}, {threads} thread(s) | {est['wall_s']:.2f} "
                  f"(+-{est['wall_s_spread']:.0%}) / {walls[0]:.2f}-{statistics.median(walls):.2f}-{walls[-1]:.2f} | "
                  f"{cpu:.2f} | {est['peak_bytes'] / 2**20:.0f} (+-{est['peak_bytes_spread']:.0%}) / "
                  f"{peak / 2**20:.0f} | {est['save_bytes'] / 1024:.0f} (+-{est['save_bytes_spread']:.0%}) / "
                  f"{saved} | {within(est['wall_s'], timed)}, {within(est['peak_bytes'], peak)}, {saved_ok} |",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
