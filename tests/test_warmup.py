"""The first-run helper: started only on a cold cache, what it compiles is what a resolution then loads, and the run
makes product tables only once it is done."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor import warmup
from algebra.milnor.products import run_batch
from fp import kernel_cache

ROOT = Path(__file__).resolve().parent.parent


def test_started_once_per_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], Path]] = []
    monkeypatch.setattr(kernel_cache, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: started.append((cmd, kw["cwd"])))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert warmup.start() and started[-1] == ([sys.executable, "-m", "algebra.milnor.compile_helper"], ROOT)  # where
    # the packages are imported from
    (tmp_path / warmup.MARKER).touch()
    assert not warmup.start() and len(started) == 1
    (tmp_path / warmup.MARKER).unlink()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not warmup.start() and len(started) == 1


def test_the_cache_is_keyed_by_where_the_sources_are_and_when_they_changed(tmp_path: Path) -> None:
    """Two copies of the same sources, or one copy touched (a reinstallation), get caches of their own: numba
    calls the other's entries stale, so markers shared with them would skip the helper for nothing."""
    for copy in ("a", "b"):
        for pkg in ("fp", "algebra"):
            (tmp_path / copy / pkg).mkdir(parents=True)
            (tmp_path / copy / pkg / "k.py").write_text("x = 1\n")
            os.utime(tmp_path / copy / pkg / "k.py", ns=(10**18, 10**18))
    a, b = kernel_cache.source_hash(tmp_path / "a"), kernel_cache.source_hash(tmp_path / "b")
    assert a == kernel_cache.source_hash(tmp_path / "a") and a != b
    os.utime(tmp_path / "a" / "fp" / "k.py", ns=(10**18 + 1, 10**18 + 1))
    assert kernel_cache.source_hash(tmp_path / "a") != a
    (tmp_path / "b" / "algebra" / "k.py").write_text("x = 2\n")
    os.utime(tmp_path / "b" / "algebra" / "k.py", ns=(10**18, 10**18))
    assert kernel_cache.source_hash(tmp_path / "b") != b
    nested = tmp_path / "b" / "algebra" / "milnor" / "k.py"  # kernels live in subpackages too
    nested.parent.mkdir()
    nested.write_text("x = 1\n")
    os.utime(nested, ns=(10**18, 10**18))
    before = kernel_cache.source_hash(tmp_path / "b")
    nested.write_text("x = 3\n")
    os.utime(nested, ns=(10**18, 10**18))
    assert kernel_cache.source_hash(tmp_path / "b") != before


def test_a_resolution_loads_what_the_helper_compiled(tmp_path: Path) -> None:
    """Structural: after the helper ran on an empty cache, a resolution takes the column moves and the matrix
    product from the cache (numba's cache hits), compiling none of them (a helper compiling other argument types
    would leave misses)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NASSAU_NUMBA_BASE=str(tmp_path))
    subprocess.run([sys.executable, "-m", "algebra.milnor.compile_helper"], cwd=ROOT, env=env, check=True, timeout=300)
    assert (tmp_path / kernel_cache.source_hash() / warmup.MARKER).exists()
    probe = """
import json
from algebra.module.loader import load_module
from nassau.engine.resolve import resolve
from nassau.engine.region import Region
from algebra.milnor import product_tables
from fp import masked, matmul
resolve(load_module("S_2"), Region(max_s=8, min_degree=0, max_stem=20), "nassau", 1)
print(json.dumps({k.py_func.__name__: [len(k.stats.cache_hits), len(k.stats.cache_misses)]
                  for k in (masked._gather_sorted, masked._scatter_sorted, matmul._addmul_rows,
                            product_tables._key_tables, product_tables._fill)}))
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats == {"_gather_sorted": [1, 0], "_scatter_sorted": [1, 0], "_addmul_rows": [1, 0], "_key_tables": [1, 0],
                     "_fill": [1, 0]}, stats


def test_no_product_tables_until_the_helper_is_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the helper compiles the tables' kernels a run enumerates its products (no table made, no table
    kernel compiled here); once its marker is there the tables start, and the bits are the same either way."""
    from tests.test_algebra_products import random_batch
    from tests.test_product_tables import fresh

    monkeypatch.setattr(kernel_cache, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: None)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(warmup.time, "monotonic", iter(range(0, 1000, 1)).__next__)
    assert warmup.start()
    basis, direct = fresh("A", 1 << 30), fresh("A", 0)
    rng = np.random.default_rng(7)
    batch, ncols = random_batch(rng, basis, rows=100, lists=10, top=30)
    outs = []
    for marked in (False, True):
        if marked:
            (tmp_path / warmup.MARKER).touch()
        out = np.zeros((100, (ncols + 63) // 64), dtype=np.uint64)
        run_batch(out, batch, basis)
        outs.append(out)
        assert (basis._product_tables.counts["tables"] > 0) == marked
    expected = np.zeros_like(outs[0])
    run_batch(expected, batch, direct)
    assert all(np.array_equal(out, expected) for out in outs)
