"""Shared test helpers: golden files and running the engine or the CLI."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from algebra.module.loader import load_module
from nassau.cli.main import main
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import resolve

DATA = Path(__file__).parent / "data" / "sseq"
#: A machine's constants as a calibration writes them, for tests that need a wall time but not a real one.
FAKE_MACHINE = {"coefficients": [1e-4, 1e-6, 1e-3, 1e-7], "startup_s": 0.5, "floor_bytes": 150e6,
                "calibrated_on": "a test", "seconds": 1.0, "residual": 0.0, "load_average": 0.0, "date": "today"}


def fake_cost_cache(where: Path, kinds: list[tuple[str, str]]) -> Path:
    """A cost cache at `where` (the caller points NASSAU_COST_DIR at it) holding FAKE_MACHINE for each calibration
    kind (prime kind, step kind), so that a test's estimates run no calibration."""
    from nassau.cost import calibration

    for kind in kinds:
        path = calibration._machine_path(*kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(FAKE_MACHINE))
    return where


def golden(name: str) -> str:
    """A reference output without its first line (the reference's command line)."""
    return (DATA / name).read_text(encoding="utf-8").split("\n", 1)[1]


def run_engine(module: str, *, stem: int | None = None, max_t: int | None = None, max_s: int = 15,
               algorithm: str = "standard", threads: int = 1) -> tuple[Resolution, Region]:
    m = load_module(module)
    region = Region(max_s=max_s, min_degree=m.min_degree, max_stem=stem, max_t=max_t)
    return resolve(m, region, algorithm, threads), region


def differentials(res: Resolution, max_s: int) -> list[list[tuple[bytes, int]]]:
    """Every generator's d as stored (vector bytes, target generator count), row by row: two runs with these equal
    made the same resolution, bit for bit."""
    out = []
    for s in range(1, max_s + 1):
        d = res.differential(s)
        out.append([(d.output(g)[0].tobytes(), d.output(g)[1]) for g in range(res.free(s).num_gens)])
    return out


def dims_in(res: Resolution, region: Region) -> dict[tuple[int, int], int]:
    return {b: k for b, k in res.dims().items() if region.contains(*b)}


def assert_one_line_error(out: subprocess.CompletedProcess, needle: str) -> None:
    """A user error as the CLI must report it: status 2, one line `nassau: error: ...` naming `needle`, no
    traceback."""
    err = out.stderr.decode()
    assert out.returncode == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nassau: error:") and needle in lines[0], err


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`nassau ARGS` in this process (no interpreter start-up, warm kernels): exit status, stdout and stderr bytes.

    Use `cli` only where a test needs a process of its own (signals, the `python -m nassau` entry point).
    """
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help and usage errors
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    out.flush()
    return subprocess.CompletedProcess(["nassau", *args], code, out.buffer.getvalue(), err.getvalue().encode())


def saved_runs(base_of, runs: dict[str, list[str]], threads: int) -> dict[str, tuple[bytes, bytes, Path]]:
    """Each command run on `threads` threads, saved and exported: name -> (chart, JSON, save directory), the
    reference a cluster run's bytes are compared with. base_of(name) gives a fresh directory for each."""
    out = {}
    for name, args in runs.items():
        base = base_of(name)
        run = run_cli(*args, "--threads", str(threads), "--save-dir", str(base / "save"), "--json",
                      str(base / "c.json"), "--quiet")
        assert run.returncode == 0, run.stderr
        out[name] = (run.stdout, (base / "c.json").read_bytes(), base / "save")
    return out


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m nassau ARGS` in a child process and capture its output."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "nassau", *args], capture_output=True, cwd=cwd, env=full_env,
                          timeout=timeout)
