"""The first-run helper: started only on a cold cache, what it compiles is what a resolution then loads, and the run
makes product tables only once it is done."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from algebra.milnor import warmup
from algebra.milnor.products import run_batch
from fp import kernel_cache

ROOT = Path(__file__).resolve().parent.parent


def _helper_holds_the_lock(cmd: list[str], **kw: object) -> int:
    """A stand-in for starting the helper: keeps the descriptor it would inherit (a duplicate shares its lock)."""
    return os.dup(kw["pass_fds"][0])  # type: ignore[index]


def test_started_once_per_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], Path]] = []
    held: list[int] = []

    def popen(cmd: list[str], **kw: object) -> None:
        started.append((cmd, kw["cwd"]))
        held.append(_helper_holds_the_lock(cmd, **kw))

    monkeypatch.setattr(kernel_cache, "CACHE_DIR", tmp_path)
    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(warmup.time, "monotonic", iter(range(0, 1000, 1)).__next__)  # each look reads the cache
    assert warmup.start() and started[-1] == ([sys.executable, "-m", "algebra.milnor.compile_helper"], ROOT)  # where
    # the packages are imported from
    assert not warmup.start() and len(started) == 1 and warmup.helper_compiling()  # the running helper's lock
    os.close(held.pop())  # the helper died without its marker: the next run starts one, no one waits for the dead
    assert not warmup.helper_compiling()
    assert warmup.start() and len(started) == 2
    (tmp_path / warmup.MARKER).touch()
    os.close(held.pop())
    assert not warmup.start() and len(started) == 2 and not warmup.helper_compiling()
    (tmp_path / warmup.MARKER).unlink()
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert not warmup.start() and len(started) == 2


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
from fp import m4ri, masked, matmul, quasi_inverse
resolve(load_module("S_2"), Region(max_s=8, min_degree=0, max_stem=20), "nassau", 1)
print(json.dumps({k.py_func.__name__: [len(k.stats.cache_hits), len(k.stats.cache_misses)]
                  for k in (masked._gather_sorted, masked._scatter_sorted, matmul._addmul_rows,
                            product_tables._key_tables, product_tables._fill, m4ri._with_identity,
                            m4ri._gauss_jordan, m4ri._split_rows, quasi_inverse._correct, masked._any_in_columns)}))
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats == {"_gather_sorted": [1, 0], "_scatter_sorted": [1, 0], "_addmul_rows": [1, 0], "_key_tables": [1, 0],
                     "_fill": [1, 0], "_with_identity": [1, 0], "_gauss_jordan": [1, 0], "_split_rows": [1, 0],
                     "_correct": [1, 0], "_any_in_columns": [1, 0]}, stats


def test_the_helper_compiles_the_reductions_first_and_the_product_kernel_once(tmp_path: Path) -> None:
    """What the helper compiles, in order (numba's compile events, on an empty cache): first the small reductions and
    a Nassau step's correction, which the main process reaches right after its product kernel; one copy of
    multiply_into for both of its callers (a copy for the table filler's literal zeros and read-only forbid array
    cost 2.0 s), and none of numba's slice-assignment message (string formatting, 2.0 s)."""
    probe = """
import json
from numba.core import event
rec = event.RecordingListener()
event.register("numba:compile", rec)
from algebra.milnor.compile_helper import compile_kernels
compile_kernels()
print(json.dumps([[ev.data["dispatcher"].py_func.__module__, ev.data["dispatcher"].py_func.__qualname__]
                  for _, ev in rec.buffer if ev.is_start]))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NASSAU_NUMBA_BASE=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True, timeout=300,
                         capture_output=True, text=True)
    compiled = json.loads(out.stdout.strip().splitlines()[-1])
    ours = [name for module, name in compiled if module.startswith(("fp.", "algebra."))]
    assert ours[:2] == ["_with_identity", "_gauss_jordan"], ours
    assert ours.index("_correct") < ours.index("_any_in_columns") < ours.index("_gather_sorted") < ours.index("_fill")
    assert ours.count("multiply_into") == 1 and ours.count("_batch_kernel") == 1, ours
    assert not [name for _, name in compiled if "shape_context" in name], compiled


def test_no_product_tables_until_the_helper_is_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the helper compiles the tables' kernels a run enumerates its products (no table made, no table
    kernel compiled here); once its marker is there the tables start, and the bits are the same either way."""
    from tests.test_algebra_products import random_batch
    from tests.test_product_tables import fresh

    monkeypatch.setattr(kernel_cache, "CACHE_DIR", tmp_path)
    held: list[int] = []
    monkeypatch.setattr(subprocess, "Popen", lambda cmd, **kw: held.append(_helper_holds_the_lock(cmd, **kw)))
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
    os.close(held.pop())
    expected = np.zeros_like(outs[0])
    run_batch(expected, batch, direct)
    assert all(np.array_equal(out, expected) for out in outs)


def _helpers_on(cache: Path) -> set[int]:
    """The pids of running first-run helpers whose kernel cache is under `cache` (read from /proc)."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if b"algebra.milnor.compile_helper" in (proc / "cmdline").read_bytes() and \
                    f"NASSAU_NUMBA_BASE={cache}".encode() in (proc / "environ").read_bytes().split(b"\0"):
                found.add(int(proc.name))
        except (OSError, ValueError):  # not a process, gone, or not ours
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="counts helpers through /proc")
def test_runs_started_together_on_an_empty_cache_start_one_helper(tmp_path: Path) -> None:
    """Six command lines started at once on an empty cache: every helper alive while they run (and just after) is
    counted, and there is one. A helper compiles for seconds on an empty cache, so none ends before it is seen."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NASSAU_NUMBA_BASE=str(tmp_path))
    runs = [subprocess.Popen([sys.executable, "-m", "nassau", "resolve", "NO_SUCH_MODULE", "--stem", "1"], cwd=ROOT,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(6)]
    seen: set[int] = set()
    try:
        while any(r.poll() is None for r in runs):
            seen |= _helpers_on(tmp_path)
            time.sleep(0.02)
        seen |= _helpers_on(tmp_path)
        assert [r.returncode for r in runs] == [2] * 6  # each reached the command (the helper starts before it)
        assert len(seen) == 1, seen
        assert (tmp_path / kernel_cache.source_hash() / warmup.LOCK).exists()
    finally:
        for pid in seen:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
