"""Side by side with the reference engine on this machine: the same chart, alternating runs, wall time and RSS.

    python benchmarks/bench_vs_reference.py --reference ~/.cache/nassau-reference/peer --module S_3 \\
        --stem 200 --max-s 50 --threads 1 --repeat 3
    python benchmarks/bench_vs_reference.py --reference ~/.cache/nassau-reference/peer --command secondary \\
        --variant nassau --stem 70 --max-s 20 --threads 1 --repeat 3
    python benchmarks/bench_vs_reference.py --reference ~/.cache/nassau-reference/peer --command secondary_product \
        --product h_0=0,1,[1] --variant nassau --stem 60 --max-s 20 --threads 1 --repeat 3

The reference is sseq's `resolve_through_stem` example (SpectralSequences/sseq at d7fc74c6, crate `ext`, release
mode, for the native CPU) and the crate's other examples, built into the --reference directory as <example>-std and
<example>-nassau (not a dependency of the project: measure with it, never test against it). `--variant` picks its
build: std (the standard algorithm, what it uses at odd primes), nassau, or their -concurrent builds (threads by
RAYON_NUM_THREADS). Each round runs ours (`python -m nassau resolve MODULE --stem N --max-s S --threads K`) and
the reference on the same input, alternately, after one warm-up of each; the two charts must be byte-identical.
Memory is each engine's peak RSS and, sampled, its peaks of anonymous and of file-backed resident memory (see run).
`--command secondary` compares `nassau secondary` (d2) with the reference's `secondary` example instead (built as
secondary-nassau by default; its Nassau build only runs with a save directory, so then both engines write one, a
fresh one each run). `--command secondary_product --product NAME=n,s,[v]` compares `nassau secondary --product`
with the reference's `secondary_product` the same way.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_resolve import machine

MODULES = Path(__file__).resolve().parents[1] / "algebra" / "module" / "bundled"


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, float, bytes]:
    """(wall seconds, peak RSS MiB, peak anonymous and file-backed resident MiB, stdout) of one process.

    Peak RSS is the kernel's (os.wait4); the split is sampled every SAMPLE_SECONDS from /proc/PID/status (RssAnon:
    memory the process allocated; RssFile: pages of mapped files such as shared libraries' code, clean and
    shared, which the system drops and reads back at will): our engine maps numba's LLVM library (68 MiB of it
    resident once kernels load), a static Rust binary maps almost nothing."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    split = {"RssAnon": 0, "RssFile": 0}
    sampler = threading.Thread(target=_sample, args=(proc, split), daemon=True)
    sampler.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    sampler.join()
    if status != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_maxrss / 1024, split["RssAnon"] / 1024, split["RssFile"] / 1024, out


SAMPLE_SECONDS = 0.005


def _sample(proc: subprocess.Popen, peaks: dict[str, int]) -> None:
    """Keep the largest value (KiB) of each field of `peaks` in /proc/PID/status until the process ends. It never
    polls the process: a poll here could reap it before run's os.wait4, which then fails (No child processes)."""
    path = f"/proc/{proc.pid}/status"
    while True:
        try:
            with open(path) as fh:
                fields = dict(line.partition(":")[::2] for line in fh)
        except OSError:  # reaped by run
            return
        if fields.get("State", "").split()[:1] == ["Z"]:
            return
        for key in peaks:
            if key in fields:
                peaks[key] = max(peaks[key], int(fields[key].split()[0]))
        time.sleep(SAMPLE_SECONDS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", required=True, help="the directory holding the reference's binaries")
    ap.add_argument("--variant", default="std", choices=["std", "nassau", "std-concurrent", "nassau-concurrent"])
    ap.add_argument("--module", default="S_2")
    ap.add_argument("--stem", type=int, required=True)
    ap.add_argument("--max-s", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--algorithm", default="auto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--warm-up-stem", type=int, help="the warm-up runs' stem (default: --stem; a smaller one loads the "
                                                     "same kernels and files before a long run)")
    ap.add_argument("--command", default="resolve", choices=["resolve", "secondary", "secondary_product"])
    ap.add_argument("--product", default="h_0=0,1,[1]", metavar="NAME=n,s,[v]",
                    help="the class of --command secondary_product")
    args = ap.parse_args()
    example = "resolve_through_stem" if args.command == "resolve" else args.command
    ref_bin = Path(args.reference).expanduser() / f"{example}-{args.variant}"
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    save = args.command != "resolve" and args.variant.startswith("nassau")
    product_name, _, spec = args.product.partition("=")
    product_class = spec.split(",", 2) if args.command == "secondary_product" else []  # n, s, [v]

    def commands(tmp: str, stem: int = args.stem) -> tuple[list[str], list[str]]:
        """Our command and the reference's, each with a fresh save directory under tmp when they need one."""
        command = "resolve" if args.command == "resolve" else "secondary"
        ours = [sys.executable, "-m", "nassau", command, args.module, "--stem", str(stem), "--max-s",
                str(args.max_s), "--threads", str(args.threads), "--algorithm", args.algorithm, "--quiet"]
        theirs = [str(ref_bin), args.module, tempfile.mkdtemp(dir=tmp) if save else "", str(stem), str(args.max_s)]
        if save:
            ours += ["--save-dir", tempfile.mkdtemp(dir=tmp)]
        if args.command == "secondary":
            theirs.append("")  # no secondary save directory of its own
        if args.command == "secondary_product":
            ours += ["--product", args.product]
            theirs += [product_name, *product_class]
        return ours, theirs

    print(f"# machine: {machine()}")
    print(f"# {args.command} {args.module} through stem {args.stem}, s <= {args.max_s}, {args.threads} thread(s); "
          f"reference {ref_bin.name}{' (both with save directories)' if save else ''}; {args.repeat} alternating "
          f"rounds after a warm-up of each")
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = commands(tmp, args.warm_up_stem or args.stem)
        run(ours, root, env)
        run(theirs, MODULES, env)
    results: dict[str, list[tuple[float, float, float, float]]] = {"nassau": [], "reference": []}
    charts = {}
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = commands(tmp)
            for name, cmd, cwd in (("nassau", ours, root), ("reference", theirs, MODULES)):
                *figures, out = run(cmd, cwd, env)
                results[name].append(tuple(figures))
                charts[name] = out
    same = charts["nassau"] == charts["reference"]
    print("engine      min s  median s   max s  peak RSS MiB  of it: anonymous  file-backed (sampled peaks)")
    for name, rows in results.items():
        walls = [row[0] for row in rows]
        print(f"{name:10s} {min(walls):6.2f} {statistics.median(walls):9.2f} {max(walls):7.2f} "
              f"{max(row[1] for row in rows):13.0f} {max(row[2] for row in rows):17.0f} "
              f"{max(row[3] for row in rows):12.0f}")
    for name, rows in results.items():  # both engines' peaks move from run to run (the allocators' fragmentation)
        print(f"{name:10s} peak RSS MiB per round: {', '.join(f'{row[1]:.0f}' for row in rows)}")
    ratio = statistics.median(r[0] for r in results["nassau"]) / statistics.median(r[0] for r in results["reference"])
    print(f"ratio (median ours / median reference): {ratio:.2f}; charts byte-identical: {same}")
    if not same:
        for name, out in charts.items():
            Path(f"{tempfile.gettempdir()}/bench_vs_reference.{name}.txt").write_bytes(out)
        raise SystemExit(f"the charts differ (both kept in {tempfile.gettempdir()}/bench_vs_reference.*.txt)")


if __name__ == "__main__":
    main()
