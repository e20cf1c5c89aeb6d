"""Benchmark fp.row_reduce against libm4ri (one command: .venv/bin/python benchmarks/bench_fp.py).

For each shape: several runs of our serial and two-thread M4RI and of libm4ri's mzd_echelonize_m4ri(A, 1, 0),
alternated so drift hits all three alike; min / median / max; and a check that the RREFs are identical. Cold
start (import plus first calls, compiling the kernels into an empty numba cache) and a warm-cache start are
measured in fresh processes. libm4ri is reached through benchmarks/m4ri_echelon.c, compiled here with gcc; if the
library (Debian: apt-get install libm4ri-dev) or gcc is missing, that column is skipped with a message.

A second table times the small matrices the engine reduces by the ten thousand (1x1 to a few hundred rows): our
time per call includes the Python wrapper (validation, dispatch); libm4ri's is its echelonize call alone.

Options: --runs N (default 7), --shapes 1024x1024,... , --no-cold.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fp import m4ri, row_reduce  # noqa: E402
from fp.packed import random_matrix  # noqa: E402

DEFAULT_SHAPES = "1024x1024,4096x4096,8192x8192,2000x30000"
SMALL_SHAPES = [(1, 1), (10, 20), (30, 60), (50, 100), (100, 200), (200, 400), (300, 600)]


def machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        model = platform.processor() or platform.machine()
    return f"{model}, {os.cpu_count()} cpus"


def load_libm4ri(tmp: Path) -> tuple[ctypes.CDLL | None, str]:
    """Compile and load the C bridge; returns (library or None, why not)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None, "gcc not found"
    out = tmp / "m4ri_echelon.so"
    cmd = [gcc, "-O2", "-shared", "-fPIC", str(Path(__file__).with_name("m4ri_echelon.c")), "-o", str(out), "-lm4ri"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "libm4ri not available (apt-get install libm4ri-dev): " + proc.stderr.strip().splitlines()[0]
    lib = ctypes.CDLL(str(out))
    lib.echelon.restype = ctypes.c_int
    lib.echelon.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]
    return lib, ""


def m4ri_echelon(lib: ctypes.CDLL, a: np.ndarray, ncols: int) -> tuple[float, np.ndarray]:
    b = a.copy()
    seconds = ctypes.c_double()
    if lib.echelon(b.ctypes.data, b.shape[0], ncols, b.shape[1], ctypes.byref(seconds)) < 0:
        raise MemoryError("libm4ri could not allocate the matrix")
    return seconds.value, b


def full_rank_matrix(rows: int, ncols: int, seed: int) -> tuple[np.ndarray, int]:
    """A uniformly random matrix of full rank min(rows, ncols): the first seed from `seed` on that gives one."""
    while True:
        a = random_matrix(rows, ncols, np.random.default_rng(seed))
        if len(row_reduce(a.copy(), ncols)) == min(rows, ncols):
            return a, seed
        seed += 1


def timed(a: np.ndarray, ncols: int, parallel: bool) -> tuple[float, np.ndarray]:
    b = a.copy()
    t0 = time.perf_counter()
    row_reduce(b, ncols, parallel=parallel)
    return time.perf_counter() - t0, b


COLD_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from fp import row_reduce
from fp.packed import random_matrix
t1 = time.perf_counter()
a = random_matrix(1024, 1024, np.random.default_rng(1))
b = a.copy(); t2 = time.perf_counter(); row_reduce(b, 1024, parallel=False); t3 = time.perf_counter()
b = a.copy(); t4 = time.perf_counter(); row_reduce(b, 1024, parallel=True); t5 = time.perf_counter()
b = a[:8].copy(); t6 = time.perf_counter(); row_reduce(b, 1024); t7 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "serial": t3 - t2, "parallel": t5 - t4, "gauss": t7 - t6}))
"""


def cold_start(cache: Path) -> dict[str, float]:
    """Import + first calls in a fresh process whose numba cache lives in `cache`."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NASSAU_NUMBA_BASE=str(cache), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", COLD_SCRIPT], capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(ts: list[float]) -> str:
    return f"{min(ts) * 1e3:8.2f} {statistics.median(ts) * 1e3:8.2f} {max(ts) * 1e3:8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--shapes", default=DEFAULT_SHAPES)
    parser.add_argument("--no-cold", action="store_true")
    args = parser.parse_args()
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]

    row_reduce(random_matrix(300, 300, np.random.default_rng(0)), 300, parallel=False)  # compile outside timing
    row_reduce(random_matrix(300, 300, np.random.default_rng(0)), 300, parallel=True)
    print(f"machine: {machine()}; python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {numba.__version__} (threads {numba.get_num_threads()}, layer {numba.threading_layer()})")
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        if not args.no_cold:
            cold = cold_start(tmp / "numba-cold")
            warm = cold_start(tmp / "numba-cold")
            print("cold start (empty numba cache, includes compiling): "
                  f"import {cold['import']:.2f} s, first serial 1024^2 {cold['serial']:.2f} s, "
                  f"first parallel {cold['parallel']:.2f} s, first tiny (Gauss) {cold['gauss']:.2f} s")
            print("warm cache, fresh process: "
                  f"import {warm['import']:.2f} s, first serial 1024^2 {warm['serial']:.3f} s, "
                  f"first parallel {warm['parallel']:.3f} s, first tiny {warm['gauss']:.3f} s")
        lib, why = load_libm4ri(tmp)
        if lib is None:
            print(f"libm4ri: SKIPPED ({why})")

        print(f"\nrow_reduce to RREF, {args.runs} runs each, times in ms (min median max); "
              "ratio = our median / libm4ri median")
        print(f"{'shape':>12} {'k':>2} {'tables MiB':>10} | {'ours, 1 thread':^26} | {'ours, 2 threads':^26} | "
              f"{'libm4ri (1 thread)':^26} | {'ratio 1t':>8} {'ratio 2t':>8} | same RREF")
        for rows, ncols in shapes:
            a, seed = full_rank_matrix(rows, ncols, 1)
            k = m4ri.choose_k(rows)
            table_mib = m4ri.NTAB * (1 << k) * a.shape[1] * 8 / 2**20
            ours1: list[float] = []
            ours2: list[float] = []
            lib_t: list[float] = []
            same = True
            for _ in range(args.runs):
                t, r1 = timed(a, ncols, parallel=False)
                ours1.append(t)
                t, r2 = timed(a, ncols, parallel=True)
                ours2.append(t)
                same &= bool(np.array_equal(r1, r2))
                if lib is not None:
                    t, r3 = m4ri_echelon(lib, a, ncols)
                    lib_t.append(t)
                    same &= bool(np.array_equal(r1, r3))
            if lib_t:
                lib_cols = f"{fmt(lib_t)} | {statistics.median(ours1) / statistics.median(lib_t):8.2f} " \
                           f"{statistics.median(ours2) / statistics.median(lib_t):8.2f}"
            else:
                lib_cols = f"{'skipped':^26} | {'-':>8} {'-':>8}"
            print(f"{rows:>5}x{ncols:<6} {k:>2} {table_mib:>10.2f} | {fmt(ours1)} | {fmt(ours2)} | {lib_cols} | "
                  f"{'yes' if same else 'NO'} (seed {seed})")
        small_matrices(lib, args.runs)


def small_matrices(lib: ctypes.CDLL | None, runs: int) -> None:
    print(f"\nsmall matrices, time per call in microseconds (min over {runs} batches)")
    print(f"{'shape':>10} {'calls':>6} | {'ours (with wrapper)':>19} | {'libm4ri':>8} | same RREF")
    rng = np.random.default_rng(2)
    for rows, ncols in SMALL_SHAPES:
        calls = max(20, 200_000 // (rows * ncols // 64 + rows))
        mats = [random_matrix(rows, ncols, rng) for _ in range(calls)]
        ours = []
        for _ in range(runs):
            work = [m.copy() for m in mats]
            t0 = time.perf_counter()
            for m in work:
                row_reduce(m, ncols)
            ours.append((time.perf_counter() - t0) / calls)
        same, theirs = True, []
        if lib is not None:
            for _ in range(runs):
                total = 0.0
                for m, done in zip(mats, work):
                    t, r = m4ri_echelon(lib, m, ncols)
                    total += t
                    same &= bool(np.array_equal(r, done))
                theirs.append(total / calls)
        lib_col = f"{min(theirs) * 1e6:8.2f}" if theirs else f"{'skipped':>8}"
        print(f"{rows:>4}x{ncols:<5} {calls:>6} | {min(ours) * 1e6:19.2f} | {lib_col} | {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
