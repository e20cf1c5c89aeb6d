"""The frontier: S_2 through stems 160, 170 and 180 with s <= 152, each run resuming the one save directory the last
left, as a user whose sitting is too short for the whole would run it.

    python benchmarks/bench_frontier.py --stems 160 170 180 --out bench-results/frontier
    python benchmarks/bench_frontier.py --stems 160 --processes --save-dir /big/disk/S_2

For each stem, in ascending order: `nassau resolve S_2 --stem N --max-s 152 --estimate --json` (the whole run's
prediction, made before it), then `nassau resolve S_2 --stem N --max-s 152 --threads K --save-dir DIR --json FILE`
in a fresh process (the command line a user types, its memory budget and progress included): the wall time of this
sitting (the stems the earlier sittings left done), its CPU (user + sys of the process tree), the peak resident
memory of its largest process, the peak of the whole tree with shared pages counted once (sampled every second),
the save directory's bytes and the generators. The chart is kept at OUT/S_2-N.txt; a stem whose chart is there
already is not run again, so the benchmark itself resumes after a cut sitting, whose figures (OUT/S_2-N.cuts.json)
count in the stem's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402

from nassau.cost.memory import SAMPLE_SHARE, tree_rss  # noqa: E402


def nassau(*args: str) -> list[str]:
    return [sys.executable, "-m", "nassau", *args]


def watched(args: list[str], out: Path, err: Path) -> tuple[int, dict]:
    """The command run in a child with its stdout and stderr to these files: its exit status and its figures (wall,
    CPU of its tree, the peak RSS of its largest process, the peak of the whole tree with shared pages counted once,
    sampled every second, or as seldom as the run's own guard samples where a sample costs more)."""
    peak = [0]
    start = time.perf_counter()
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(args, stdout=stdout, stderr=stderr)
        done = threading.Event()

        def sample() -> None:
            wait = 1.0
            while not done.wait(wait):
                start = time.perf_counter()
                peak[0] = max(peak[0], tree_rss(proc.pid))
                wait = max(1.0, (time.perf_counter() - start) / SAMPLE_SHARE)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
    figures = {"wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
               "peak_process_bytes": usage.ru_maxrss * 1024, "peak_tree_bytes": peak[0]}
    return os.waitstatus_to_exitcode(status), figures


def sitting(args: list[str], chart: Path) -> dict:
    """One run of the command in a child of its own; its figures (its stderr kept beside the chart)."""
    log = chart.with_suffix(".log")
    status, figures = watched(args, chart, log)
    if status:  # a cut sitting: what it did is kept, and the stem's next sitting adds it
        chart.unlink()
        cuts = chart.with_suffix(".cuts.json")
        earlier = json.loads(cuts.read_text()) if cuts.exists() else []
        cuts.write_text(json.dumps(earlier + [figures], indent=1) + "\n")
        last = log.read_text().strip().splitlines()[-1:]
        raise SystemExit(f"{' '.join(args)} exited {status}: {last}")
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stems", type=int, nargs="+", default=[160, 170, 180])
    ap.add_argument("--max-s", type=int, default=152)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--processes", action="store_true", help="the workers are forked processes (but one)")
    ap.add_argument("--out", type=Path, default=Path("bench-results/frontier"))
    ap.add_argument("--save-dir", type=Path, help="the save directory every sitting resumes (default OUT/S_2)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    save = args.save_dir or args.out / "S_2"
    way = ["--threads", str(args.threads)] + (["--processes"] if args.processes else [])
    print(f"# {machine()}; {args.threads} {'processes' if args.processes else 'threads'}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| S_2, s <= %d | predicted: wall, peak, save | this sitting: wall, CPU | peak RSS: largest process, tree "
          "| saved | generators |" % args.max_s)
    print("| --- | --- | --- | --- | --- | --- |")
    for stem in sorted(args.stems):
        chart = args.out / f"S_2-{stem}.txt"
        figures = args.out / f"S_2-{stem}.json"
        if chart.exists() and figures.exists():
            row = json.loads(figures.read_text())
        else:
            run = ["resolve", "S_2", "--stem", str(stem), "--max-s", str(args.max_s), *way]
            est = json.loads(subprocess.run(nassau(*run, "--estimate", "--json"), capture_output=True, check=True,
                                            text=True).stdout)
            ext = args.out / f"S_2-{stem}-ext.json"
            row = sitting(nassau(*run, "--save-dir", str(save), "--json", str(ext)), chart)
            cuts = chart.with_suffix(".cuts.json")
            row["cut_sittings"] = json.loads(cuts.read_text()) if cuts.exists() else []
            row.update(stem=stem, estimate=est, save_bytes=sum(p.stat().st_size for p in save.rglob("*")
                                                                if p.is_file()),
                       generators=sum(e["dim"] for e in json.loads(ext.read_text())["ext"]), date=time.strftime(
                           "%Y-%m-%d %H:%M UTC", time.gmtime()), load_average=os.getloadavg()[0])
            figures.write_text(json.dumps(row, indent=1) + "\n")
        est = row["estimate"]
        for cut in row.get("cut_sittings", []):  # the stem's earlier sittings, cut short, count in its figures
            row["wall_s"] += cut["wall_s"]
            row["cpu_s"] += cut["cpu_s"] or 0.0
            row["peak_process_bytes"] = max(row["peak_process_bytes"], cut["peak_process_bytes"] or 0)
            row["peak_tree_bytes"] = max(row["peak_tree_bytes"], cut["peak_tree_bytes"] or 0)
        print(f"| stem {stem} | {est['wall_s'] / 60:.1f} min (+-{est['wall_s_spread']:.0%}), "
              f"{est['peak_bytes'] / 2**30:.1f} GiB (+-{est['peak_bytes_spread']:.0%}), "
              f"{est['save_bytes'] / 2**20:.0f} MiB | {row['wall_s'] / 60:.1f} min, {row['cpu_s'] / 60:.1f} min | "
              f"{row['peak_process_bytes'] / 2**30:.2f} GiB, {row['peak_tree_bytes'] / 2**30:.2f} GiB | "
              f"{row['save_bytes'] / 2**20:.0f} MiB | {row['generators']} |", flush=True)


if __name__ == "__main__":
    main()
