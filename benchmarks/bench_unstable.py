"""Time unstable Ext of S^k beside stable Ext of S^0 through the same relative stem (issue 18's benchmark).

    python benchmarks/bench_unstable.py                      # S_2[7] unstable and S_2 stable, relative stem 40
    python benchmarks/bench_unstable.py --stems 40 60 70 --k 7 --max-s 15 --repeat 5

Each run is a fresh process: `python -m nassau resolve-unstable S_2[k] --stem k+N` or `resolve S_2 --stem N
--algorithm A` (one warm-up run of each fills numba's cache first and is not counted). `wall` is the whole process
(start-up and loading compiled kernels, about a second, included); `compute` is the time the CLI reports for the
resolution itself. The unstable run is the standard algorithm on free unstable modules, so the stable standard run
is its like-for-like comparison; Nassau's (the stable default) is shown too. With the reference engine built
(shared/tools/reference-engine; `--reference DIR`, default its cache) the same requests are timed there:
resolve_unstable-std, resolve_through_stem-std and -nassau, single-threaded, run in the module folder `--modules`.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_resolve import machine

KINDS = ("unstable", "standard", "nassau")
REFERENCE_BINARY = {"unstable": "resolve_unstable-std", "standard": "resolve_through_stem-std",
                    "nassau": "resolve_through_stem-nassau"}
_COMPUTE = re.compile(rb" in ([0-9.]+) s\s*$")


def ours(kind: str, stem: int, k: int, max_s: int) -> list[str]:
    base = [sys.executable, "-m", "nassau"]
    tail = ["--max-s", str(max_s), "--threads", "1"]
    if kind == "unstable":
        return [*base, "resolve-unstable", f"S_2[{k}]", "--stem", str(stem + k), *tail]
    return [*base, "resolve", "S_2", "--stem", str(stem), "--algorithm", kind, *tail]


def theirs(reference: Path, kind: str, stem: int, k: int, max_s: int) -> list[str]:
    """The reference's prompts answered by arguments: module, save directory (none), max n (absolute), max s."""
    module, top = (f"S_2[{k}]", stem + k) if kind == "unstable" else ("S_2", stem)
    return [str(reference / REFERENCE_BINARY[kind]), module, "", str(top), str(max_s)]


def run_once(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, float | None]:
    """(wall seconds, peak RSS MiB, compute seconds the CLI reported or None) of one run; stdin gets one empty
    line (the reference's remaining prompts take their defaults)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd)
        proc.stdin.write(b"\n")
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err.seek(0)
        text = err.read().strip()
    if status != 0:
        raise SystemExit(f"run failed: {' '.join(cmd)}\n{text.decode(errors='replace')[-500:]}")
    found = _COMPUTE.search(text.splitlines()[-1]) if text else None
    return wall, usage.ru_maxrss / 1024, float(found.group(1)) if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stems", type=int, nargs="+", default=[40], help="relative stems (default 40)")
    ap.add_argument("--k", type=int, default=7, help="the sphere S^k resolved unstably (default 7)")
    ap.add_argument("--max-s", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=3)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nassau-reference" / "peer"
    ap.add_argument("--reference", type=Path, default=cache, help="the reference's binaries (default: %(default)s)")
    ap.add_argument("--modules", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "modules",
                    help="the module folder the reference runs in (default: %(default)s)")
    args = ap.parse_args()
    have_ref = all((args.reference / b).is_file() for b in REFERENCE_BINARY.values())
    print(f"# machine: {machine()}")
    print(f"# S_2[{args.k}] over the unstable algebra vs S_2, relative stem n <= N, s <= {args.max_s}, one thread; "
          f"{args.repeat} fresh processes each after one warm-up; seconds")
    if not have_ref:
        print(f"# the reference was not measured: no binaries in {args.reference}")
    for kind in KINDS:
        run_once(ours(kind, min(args.stems), args.k, args.max_s))
    print("   N kind      wall min  wall median  wall max  compute median  RSS MiB   reference min  median  max")
    for stem in args.stems:
        for kind in KINDS:
            runs = [run_once(ours(kind, stem, args.k, args.max_s)) for _ in range(args.repeat)]
            walls = [w for w, _, _ in runs]
            computes = [c for _, _, c in runs if c is not None]
            line = (f"{stem:4d} {kind:9s} {min(walls):8.2f} {statistics.median(walls):12.2f} {max(walls):9.2f} "
                    f"{statistics.median(computes) if computes else float('nan'):15.2f} "
                    f"{max(r for _, r, _ in runs):8.0f}")
            if have_ref:
                ref = [run_once(theirs(args.reference, kind, stem, args.k, args.max_s), args.modules)[0]
                       for _ in range(args.repeat)]
                line += f"   {min(ref):13.3f} {statistics.median(ref):7.3f} {max(ref):6.3f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
