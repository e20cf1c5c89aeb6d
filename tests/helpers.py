"""Shared test helpers: golden files and running the engine or the CLI."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from algebra.module_loader import load_module
from nassau.engine import resolve
from nassau.region import Region
from nassau.resolution import Resolution

DATA = Path(__file__).parent / "data" / "sseq"


def golden(name: str) -> str:
    """A reference output without its first line (the reference's command line)."""
    return (DATA / name).read_text(encoding="utf-8").split("\n", 1)[1]


def run_engine(module: str, *, stem: int | None = None, max_t: int | None = None, max_s: int = 15,
               algorithm: str = "standard", threads: int = 1) -> tuple[Resolution, Region]:
    m = load_module(module)
    region = Region(max_s=max_s, min_degree=m.min_degree, max_stem=stem, max_t=max_t)
    return resolve(m, region, algorithm, threads), region


def dims_in(res: Resolution, region: Region) -> dict[tuple[int, int], int]:
    return {b: k for b, k in res.dims().items() if region.contains(*b)}


def cli(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python -m nassau ARGS` and capture its output."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "nassau", *args], capture_output=True, cwd=cwd, env=full_env,
                          timeout=timeout)
