"""The first-run helper: started only on a cold cache, and what it compiles is what a resolution then loads."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fp import kernel_cache, warmup

ROOT = Path(__file__).resolve().parent.parent


def test_started_once_per_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], Path]] = []
    monkeypatch.setattr(kernel_cache, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: started.append((cmd, kw["cwd"])))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert warmup.start() and started[-1] == ([sys.executable, "-m", "fp.warmup"], ROOT)  # where fp is imported from
    (tmp_path / warmup.MARKER).touch()
    assert not warmup.start() and len(started) == 1
    (tmp_path / warmup.MARKER).unlink()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not warmup.start() and len(started) == 1


def test_a_resolution_loads_what_the_helper_compiled(tmp_path: Path) -> None:
    """Structural: after the helper ran on an empty cache, a resolution takes the column moves and the matrix
    product from the cache (numba's cache hits), compiling none of them (a helper compiling other argument types
    would leave misses)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NASSAU_NUMBA_BASE=str(tmp_path))
    subprocess.run([sys.executable, "-m", "fp.warmup"], cwd=ROOT, env=env, check=True, timeout=300)
    assert (tmp_path / kernel_cache.source_hash() / warmup.MARKER).exists()
    probe = """
import json
from algebra.module_loader import load_module
from nassau.engine import resolve
from nassau.region import Region
from fp import masked, matmul
resolve(load_module("S_2"), Region(max_s=8, min_degree=0, max_stem=20), "nassau", 1)
print(json.dumps({k.py_func.__name__: [len(k.stats.cache_hits), len(k.stats.cache_misses)]
                  for k in (masked._gather_sorted, masked._scatter_sorted, matmul._addmul_rows)}))
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats == {"_gather_sorted": [1, 0], "_scatter_sorted": [1, 0], "_addmul_rows": [1, 0]}, stats
