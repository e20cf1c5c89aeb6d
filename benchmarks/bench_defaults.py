"""What a user who passes nothing gets, against each explicit choice: the threads (one for a run of a few seconds,
else the cores), the way (threads or worker processes) and the algorithm (`--algorithm auto` against Nassau's and
the standard one).

    python benchmarks/bench_defaults.py --repeat 3
    python benchmarks/bench_defaults.py --only way --repeat 5

Each case is a command line run in fresh processes, in rotating order, `--repeat` times: the default (no option)
and the explicit alternatives. Reported: wall min / median / max of each, the way or algorithm the default took (from
its summary line), and the default's median against the best explicit median (the aim: within 5%).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402

#: name -> (the run, {label: extra options}); the first label is the default.
CASES = {
    "threads": (["resolve", "S_2", "--stem", "40"],
                {"default": [], "1 thread": ["--threads", "1"], "2 threads": ["--threads", "2"]}),
    "threads-70": (["resolve", "S_2", "--stem", "70", "--max-s", "38"],
                   {"default": [], "1 thread": ["--threads", "1"], "2 threads": ["--threads", "2"]}),
    "way": (["resolve", "S_2", "--stem", "90", "--max-s", "48"],
            {"default": [], "2 threads": ["--no-processes"], "2 processes": ["--processes"]}),
    "algorithm": (["resolve", "S_3", "--stem", "150", "--max-s", "40", "--threads", "1"],
                  {"auto": [], "nassau": ["--algorithm", "nassau"], "standard": ["--algorithm", "standard"]}),
    "algorithm-200": (["resolve", "S_3", "--stem", "200", "--max-s", "40", "--threads", "1"],
                      {"auto": [], "nassau": ["--algorithm", "nassau"], "standard": ["--algorithm", "standard"]}),
}


def timed(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "nassau", *args], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, out.stderr.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=sorted(CASES), nargs="+")
    args = ap.parse_args()
    print(f"# {machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| run | choice | wall s min / median / max | default took | default / best explicit |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.only or list(CASES):
        run, choices = CASES[name]
        walls: dict[str, list[float]] = {label: [] for label in choices}
        took = ""
        labels = list(choices)
        for r in range(args.repeat):
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                wall, summary = timed(run + choices[label])
                walls[label].append(wall)
                if label == labels[0]:
                    took = summary[summary.rfind("(") + 1:summary.rfind(")")]
        medians = {label: statistics.median(w) for label, w in walls.items()}
        best = min(medians[label] for label in labels[1:])
        for label in labels:
            w = sorted(walls[label])
            ratio = f"{medians[label] / best:.3f}" if label == labels[0] else ""
            print(f"| {' '.join(run[1:])} | {label} | {w[0]:.2f} / {medians[label]:.2f} / {w[-1]:.2f} | "
                  f"{took if label == labels[0] else ''} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
