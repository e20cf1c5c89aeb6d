"""What the memory budget costs in time: each run once without a budget, then with `--memory` at half of that run's
peak, the two charts compared byte for byte.

    python benchmarks/bench_budget.py                                  # S_2 through stems 120 and 150 (~40 min)
    python benchmarks/bench_budget.py --runs S_2:120:63 --repeat 3

Each run is `MODULE:STEM:MAX_S`, run as a user types it (`nassau resolve MODULE --stem STEM --max-s MAX_S --threads
K`, the way and the algorithm left to the defaults) in a fresh process: its wall time, CPU, the peak of its process
tree (shared pages counted once, as the budget counts them) and the product tables' bytes the estimate gives it.
The budget is half the first unbudgeted run's tree peak; `--repeat` alternates unbudgeted and budgeted runs. A
budgeted run that stops or fails (its stderr's last line is printed), a chart that differs from the unbudgeted one,
or a budgeted peak over its budget makes the benchmark end with status 1, after the other runs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_frontier import nassau, watched  # noqa: E402
from bench_resolve import machine  # noqa: E402

DEFAULT = ["S_2:120:63", "S_2:150:152"]


def tables_bytes(args: list[str]) -> int:
    """The product tables' bytes the run's estimate gives them."""
    est = subprocess.run(nassau(*args, "--estimate", "--json"), capture_output=True, check=True, text=True).stdout
    return json.loads(est)["product_tables_bytes"]


def run(args: list[str], tmp: Path) -> tuple[bytes, dict]:
    """The chart and figures of one run; a run that fails has its last line of stderr for a chart."""
    chart, log = tmp / "chart.txt", tmp / "log.txt"
    status, figures = watched(nassau(*args), chart, log)
    if status:
        last = log.read_text().strip().splitlines()[-1:]
        print(f"nassau {' '.join(args)} exited {status}: {last}", file=sys.stderr, flush=True)
        return f"exited {status}: {last}".encode(), figures
    return chart.read_bytes(), figures


def spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", default=DEFAULT, metavar="MODULE:STEM:MAX_S")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="also write every figure here")
    args = ap.parse_args()
    print(f"# {machine()}; load average {os.getloadavg()[0]:.1f}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| run | budget | wall s min / median / max: none, budget | ratio of medians | CPU s (median): none, budget "
          "| tree peak MiB: none, budget | tables MiB (estimate): none, budget | same chart |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.runs:
            module, stem, max_s = spec.split(":")
            plain = ["resolve", module, "--stem", stem, "--max-s", max_s, "--threads", str(args.threads), "--quiet"]
            runs: dict[str, list[dict]] = {"none": [], "budget": []}
            charts: dict[str, set[bytes]] = {"none": set(), "budget": set()}
            budget = 0
            for _ in range(args.repeat):
                chart, got = run(plain, Path(tmp))
                runs["none"].append(got)
                charts["none"].add(chart)
                budget = budget or got["peak_tree_bytes"] // 2
                chart, got = run([*plain, "--memory", str(budget)], Path(tmp))
                runs["budget"].append(got)
                charts["budget"].add(chart)
            same = len(charts["none"] | charts["budget"]) == 1
            over = max(r["peak_tree_bytes"] for r in runs["budget"]) > budget
            failed |= not same or over
            tables = (tables_bytes(plain), tables_bytes([*plain, "--memory", str(budget)]))
            walls = {k: [r["wall_s"] for r in v] for k, v in runs.items()}
            med = {k: statistics.median(v) for k, v in walls.items()}
            cpu = {k: statistics.median(r["cpu_s"] for r in v) for k, v in runs.items()}
            peak = {k: max(r["peak_tree_bytes"] for r in v) / 2**20 for k, v in runs.items()}
            print(f"| {module} through stem {stem}, s <= {max_s}, {args.threads} threads, {args.repeat} round(s) "
                  f"| {budget / 2**20:.0f} MiB | {spread(walls['none'])}, {spread(walls['budget'])} "
                  f"| {med['budget'] / med['none']:.2f} | {cpu['none']:.1f}, {cpu['budget']:.1f} "
                  f"| {peak['none']:.0f}, {peak['budget']:.0f}{' (over)' if over else ''} "
                  f"| {tables[0] / 2**20:.0f}, {tables[1] / 2**20:.0f} | {'yes' if same else 'NO'} |", flush=True)
            rows.append({"run": spec, "budget_bytes": budget, "runs": runs, "tables_bytes": tables, "same": same})
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
