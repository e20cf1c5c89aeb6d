"""The memory a run may use, what it uses now, and the watch that holds it to its budget.

The budget (`--memory`, default `available_bytes()`) bounds the whole process tree: the run's process and its worker
processes, counted by proportional set size (a page that several processes share, as the product tables are, counts
once in all). A `MemoryGuard` samples that while the run goes: past SHRINK_AT of the budget it shrinks the product
tables (they are made again as needed, within a smaller budget; no result depends on them), past STOP_AT it asks the
run to stop after the jobs running now, and past KILL_AT it stops the run at once: every finished bidegree is
already in the save directory (each file is complete or absent), so nothing is lost but the jobs in flight.
"""
from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

from algebra.milnor.product_tables import machine_memory

#: Kept free of any default budget: for the system and for what the estimate does not see.
MARGIN = 0.1
MIN_MARGIN = 256 << 20
SHRINK_AT, STOP_AT, KILL_AT = 0.8, 0.92, 0.98
#: The guard's samples may take this share of the time between them, up to MAX_WAIT seconds apart: a sample walks the
#: page tables of every process of the run (/proc/PID/smaps_rollup) under each one's memory lock, 150 to 290 ms at
#: S_2 stem 180 (two processes of 6 GiB), which sampled every 0.1 s kept a core busy and stalled the workers' page
#: faults; a job's own growth between samples is the look-ahead's to foresee (nassau.cost.budget.HeldRun.done).
SAMPLE_SHARE = 0.02
MAX_WAIT = 5.0
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class BudgetError(ValueError):
    """A memory size that cannot be read."""


def parse_size(text: str) -> int:
    """Bytes from `4G`, `512M`, `1.5GiB`, `300MB` or a plain number of bytes (units are powers of 1024)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise BudgetError(f"--memory must be a size such as 4G, 512M or 2.5GiB (got {text!r})")
    value = float(m.group(1)) * _UNITS[m.group(2).upper()]
    if value < 1 << 20:
        raise BudgetError(f"--memory {text} is less than 1 MiB")
    return int(value)


def format_size(n: float) -> str:
    """Bytes in the largest unit that leaves at least one of it (a run far past the frontier needs EiB)."""
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1024:.0f} KiB"


def available_bytes() -> int:
    """What this process may still take and hold, less a margin: the system's available memory, or what its control
    group's limit leaves if that is less, plus what the process holds already."""
    free = _meminfo("MemAvailable") or machine_memory()
    limit, used = _cgroup("memory.max"), _cgroup("memory.current")
    if limit is not None and used is not None:
        free = min(free, max(0, limit - used))
    total = free + tree_rss()
    return max(1 << 20, int(total - max(MARGIN * total, MIN_MARGIN)))


def _meminfo(field: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _cgroup(name: str) -> int | None:
    try:
        text = Path("/sys/fs/cgroup", name).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def tree_rss(pid: int | None = None) -> int:
    """Bytes the process and its descendants hold, each shared page counted once (the sum of proportional set
    sizes; resident set sizes where the system gives no PSS)."""
    pid = os.getpid() if pid is None else pid
    return sum(_pss(p) for p in _tree(pid))


def process_rss() -> int:
    """This process's resident set size in bytes (what a run's peak RSS is measured in)."""
    return _field(os.getpid(), "status", "VmRSS:")


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return out


def _pss(pid: int) -> int:
    return _field(pid, "smaps_rollup", "Pss:") or _field(pid, "status", "VmRSS:")


def _field(pid: int, name: str, field: str) -> int:
    """A field in kB of /proc/PID/NAME, in bytes (0 where it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class MemoryGuard:
    """Holds a run to `budget` bytes while it is entered: a thread samples `rss()` every `interval` seconds (further
    apart where a sample costs more than SAMPLE_SHARE of the time between them); past SHRINK_AT of the budget it
    calls `shrink()` once (the product tables), past STOP_AT it sets `stopping` (the run checks it after each job:
    nassau.cost.budget.HeldRun), and past KILL_AT it calls `kill()` (which does not return)."""

    def __init__(self, budget: int, shrink: Callable[[int], None], kill: Callable[[int], None],
                 rss: Callable[[], int] = tree_rss, interval: float = 0.1) -> None:
        self.budget, self._shrink, self._kill, self._rss, self.interval = budget, shrink, kill, rss, interval
        self.stopping = threading.Event()
        self.shrunk = False
        self.peak = 0
        #: The last sample (a run's look ahead reads it: reading the memory costs a walk of /proc, about 2 ms) and how
        #: many were taken
        self.last = 0
        self.samples = 0
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> int:
        """One look at the memory held, acting on it as the thresholds say; returns it."""
        used = self._rss()
        self.peak, self.last, self.samples = max(self.peak, used), used, self.samples + 1
        if used >= KILL_AT * self.budget:
            self._kill(used)
        if used >= SHRINK_AT * self.budget and not self.shrunk:
            self.shrunk = True
            self._shrink(used)
            used = self._rss()
        if used >= STOP_AT * self.budget:
            self.stopping.set()
        return used

    def _watch(self) -> None:
        wait = self.interval
        while not self._done.wait(wait):
            start = time.perf_counter()
            self.sample()
            wait = max(self.interval, min(MAX_WAIT, (time.perf_counter() - start) / SAMPLE_SHARE))

    def __enter__(self) -> MemoryGuard:
        self.sample()
        self._thread = threading.Thread(target=self._watch, name="nassau-memory", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
