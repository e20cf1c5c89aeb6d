"""The seed run of large charts: S_2 through stems 130, 140 and 150 with s <= 152, saved as it goes.

    python benchmarks/bench_seed.py --stems 130 140 150 --threads 2 --out bench-results/seed
    python benchmarks/bench_seed.py --stems 150 --threads 2 --processes

Each stem runs in a fresh process (`nassau.resolve` with a fresh save directory, as `nassau resolve S_2 --stem N
--max-s 152 --threads K --save-dir DIR` does) and reports its wall time (imports and kernel loading included), its
peak resident memory, what the product tables hold against their budget (algebra.milnor.product_tables), the
resolution's size (the save directory's bytes) and its generator count. The chart is written to OUT/S_2-N.txt, the
save directory kept at OUT/S_2-N (give --keep-save; they are large). The reference's 16-core CPU run of the same
region took 771 s at stem 150 and 142 s at stem 130 (the seed's figures; that machine is not this one). With
--processes the workers are forked processes but one (`--processes`); the peak memory is then the run's process
and, beside it, its largest forked worker (each holds a copy of the resolution; the product tables are shared).
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_resolve import machine  # noqa: E402


def one(stem: int, max_s: int, threads: int, out: Path, processes: bool) -> dict:
    """Run one stem in this process and return its figures."""
    start = time.perf_counter()
    import nassau
    from algebra.milnor.product_tables import tables_for

    save = out / f"S_2-{stem}"
    ext = nassau.resolve("S_2", stem=stem, max_s=max_s, threads=threads, save_dir=save, progress=False,
                         processes=processes)
    (out / f"S_2-{stem}.txt").write_text(ext.text())
    wall = time.perf_counter() - start
    tables = tables_for(ext.resolution.algebra)
    return {"stem": stem, "max_s": max_s, "threads": threads, "wall_s": wall,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "peak_worker_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "tables_mib": tables.nbytes / 2**20, "tables_budget_mib": tables.budget / 2**20,
            "save_mib": sum(f.stat().st_size for f in save.rglob("*") if f.is_file()) / 2**20,
            "generators": len(ext.generators)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stems", type=int, nargs="+", default=[130, 140, 150])
    ap.add_argument("--max-s", type=int, default=152)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("bench-results/seed"))
    ap.add_argument("--keep-save", action="store_true", help="keep each stem's save directory")
    ap.add_argument("--processes", action="store_true", help="the workers are forked processes (but one)")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process of one stem
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.one is not None:
        print(json.dumps(one(args.one, args.max_s, args.threads, args.out, args.processes)))
        return
    print(f"# machine: {machine()}")
    way = f"{args.threads} {'processes' if args.processes else 'threads'}"
    print(f"| S_2, s <= {args.max_s}, {way} | wall | peak RSS (largest worker) | product tables (budget) | saved "
          "| generators |")
    print("| --- | --- | --- | --- | --- | --- |")
    for stem in args.stems:
        shutil.rmtree(args.out / f"S_2-{stem}", ignore_errors=True)
        run = subprocess.run([sys.executable, __file__, "--one", str(stem), "--max-s", str(args.max_s),
                              "--threads", str(args.threads), "--out", str(args.out)]
                             + (["--processes"] if args.processes else []),
                             check=True, stdout=subprocess.PIPE, text=True)
        r = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"| stem {stem} | {r['wall_s']:.1f} s | {r['peak_rss_mib']:.0f} MiB ({r['peak_worker_rss_mib']:.0f}) "
              f"| {r['tables_mib']:.0f} MiB "
              f"({r['tables_budget_mib']:.0f}) | {r['save_mib']:.0f} MiB | {r['generators']} |", flush=True)
        if not args.keep_save:
            shutil.rmtree(args.out / f"S_2-{stem}")


if __name__ == "__main__":
    main()
