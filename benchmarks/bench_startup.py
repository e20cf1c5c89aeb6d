"""Time the command line's start-up: warm runs of `nassau resolve S_2 --stem 1` (start-up alone) and `--stem 40` (the
README's first command), and a first run on an empty kernel cache (what a first run after installing pays).

    python benchmarks/bench_startup.py --repeat 10 --first 2

Each run is a fresh `nassau resolve S_2 --stem N --quiet` (the console script beside this interpreter, default
--max-s and threads, as a user types it) with bytecode written as an installed package has it
(PYTHONDONTWRITEBYTECODE is dropped from the children's environment). Not `python -m nassau`: under Python 3.11 its
two extra runpy frames put numba's compiler, recursing on a first run, across a boundary of the interpreter's frame
stack, which then maps and unmaps a 16 KiB chunk on each crossing (528,000 mmap calls and 3.4 s of system time on
a first `--stem 40` on the 2-core EPYC, against 41,000 and 0.4 s for the console script; warm runs compile nothing
and are alike). Warm runs alternate the two stems after one warm-up of each; a first run gets a kernel cache of its
own (NASSAU_NUMBA_BASE in a new temporary directory), and with --fresh-bytecode a bytecode cache of its own too
(PYTHONPYCACHEPREFIX), as a checkout that never ran. Wall and CPU (user + system, the process and its children)
seconds, min/median/max; on a machine busy with other work the CPU figures are the steadier ones.
"""
from __future__ import annotations

import argparse
import fcntl
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_resolve import machine

CONSOLE_SCRIPT = os.path.join(os.path.dirname(sys.executable), "nassau")


def run(stem: int, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `nassau resolve S_2 --stem STEM --quiet` process."""
    cmd = [CONSOLE_SCRIPT, "resolve", "S_2", "--stem", str(stem), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"run failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def wait_for_helper(base: str) -> None:
    """Wait until the first run's compile helper (algebra.milnor.warmup), which outlives the run, has let go of its
    lock: left running, it would share the cores with the next run timed."""
    for lock in glob.glob(os.path.join(base, "*", "warmup.lock")):
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10, help="warm runs of each stem (default 10)")
    ap.add_argument("--first", type=int, default=2, help="first runs on an empty kernel cache (default 2; 0: none)")
    ap.add_argument("--fresh-bytecode", action="store_true", help="first runs compile their bytecode afresh too")
    args = ap.parse_args()
    if not os.access(CONSOLE_SCRIPT, os.X_OK):
        raise SystemExit(f"no console script {CONSOLE_SCRIPT}: install nassau into this interpreter's environment")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    print(f"# machine: {machine()}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("run                             n   wall min / median / max s   CPU min / median / max s")
    warm: dict[int, list[tuple[float, float]]] = {1: [], 40: []}
    for stem in warm:
        run(stem, env)  # the warm-up: kernels cached, bytecode written
    for _ in range(args.repeat):
        for stem in warm:
            warm[stem].append(run(stem, env))
    for stem, times in warm.items():
        label = f"warm --stem {stem}" + (" (start-up)" if stem == 1 else "")
        print(f"{label:<30} {len(times):>3}   {spread([w for w, _ in times]):<27} {spread([c for _, c in times])}")
    if args.first:
        firsts = []
        for _ in range(args.first):
            with tempfile.TemporaryDirectory(prefix="nassau-first-run-") as tmp:
                fresh = env | {"NASSAU_NUMBA_BASE": os.path.join(tmp, "numba")}
                fresh.pop("NUMBA_CACHE_DIR", None)
                if args.fresh_bytecode:
                    fresh["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
                firsts.append(run(40, fresh))
                wait_for_helper(os.path.join(tmp, "numba"))
        label = "first --stem 40" + (" (+ bytecode)" if args.fresh_bytecode else "")
        print(f"{label:<30} {len(firsts):>3}   {spread([w for w, _ in firsts]):<27} {spread([c for _, c in firsts])}")


if __name__ == "__main__":
    main()
