"""Where the product tables' bytes live, and the log of their keys: private arrays for the threads of one process,
or memory shared by the worker processes forked from it (nassau.engine.processes).

Each process finds a table through its own key hash (product_tables.ProductTables), which it brings up to date
from the arena's log: every key claimed (being filled), kept (with its table id) or marked too large is appended
there under the arena's lock, after its table's data. In shared memory a table that one worker fills is then read
by every other from its next batch on: each table is filled once on the machine, not once per worker, and the
machine holds one copy of the tables, not one per worker.
"""
from __future__ import annotations

import mmap
import multiprocessing
import os
import threading

import numpy as np

#: The counters' places: log entries written, tables kept, row offsets used, ranks used, the budget spent (0/1).
LOGGED, TABLES, ROWS, RANKS, FULL = range(5)


class Arena:
    """The tables' storage (tab_rows, tab_res, row_off, ranks, as product_tables.Snapshot names them), the log
    (uint64 (entries, 2), each entry a key hash slot's two words) and the counters.

    All are as large as the budget could ever fill and allocated once: the system gives zeroed pages only as they
    are written, so a run holds what its tables use, and tables are never copied to grow (two generations of them at
    once, while threads still read the old, made stem 120 peak 300 MB higher). A table takes at least 20 bytes (two
    row offsets, two starts) and a log entry 16, all counted in the budget. A request the system refuses is
    halved."""

    def __init__(self, budget: int, shared: bool = False) -> None:
        self.shared = shared
        self.lock = process_lock() if shared else threading.Lock()
        while True:
            try:
                self.counters = _zeros(8, np.int64, shared)
                self.tab_rows = _zeros(budget // 20 + 1, np.int64, shared)
                self.tab_res = _zeros(budget // 20 + 1, np.int64, shared)
                self.row_off = _zeros(budget // 2 + 1, np.uint16, shared)
                self.ranks = _zeros(budget // 2 + 1, np.uint16, shared)
                self.log = _zeros(2 * (budget // 16 + 1), np.uint64, shared).reshape(-1, 2)
                break
            except (MemoryError, OSError):
                budget //= 2
        self.counters[FULL] = budget == 0

    def fits(self, tables: int, rows: int, ranks: int, entries: int) -> bool:
        """Whether the storage has room for this many more tables, row offsets, ranks and log entries."""
        c = self.counters
        return (c[TABLES] + tables <= len(self.tab_rows) and c[ROWS] + rows <= len(self.row_off)
                and c[RANKS] + ranks <= len(self.ranks) and c[LOGGED] + entries <= len(self.log))

    def append(self, words: np.ndarray) -> bool:
        """Log these entries (under the lock); False, and the budget marked spent, if the log has no room."""
        c = self.counters
        if c[LOGGED] + len(words) > len(self.log):
            c[FULL] = 1
            return False
        self.log[c[LOGGED]:c[LOGGED] + len(words)] = words
        c[LOGGED] += len(words)  # after the entries: a reader under the lock sees whole entries only
        return True

    def shared_copy(self, budget: int) -> Arena | None:
        """This arena in memory that processes forked from now on share (None if the system gives too little)."""
        other = Arena(budget, shared=True)
        c = self.counters
        if not other.fits(int(c[TABLES]), int(c[ROWS]), int(c[RANKS]), int(c[LOGGED])):
            return None
        for name, used in (("tab_rows", TABLES), ("tab_res", TABLES), ("row_off", ROWS), ("ranks", RANKS),
                           ("log", LOGGED)):
            getattr(other, name)[:c[used]] = getattr(self, name)[:c[used]]
        other.counters[:] = c
        return other


class MakerGone(RuntimeError):
    """A process_lock's maker died while a forked process waited on it."""


class _ForkLock:
    """A lock (a POSIX semaphore) that processes forked from its maker share. A forked process waiting on it gives up,
    raising MakerGone, once the maker has died: a maker killed while holding it (SIGKILL) would leave it held for
    ever, and its workers waiting. The maker's death shows as the waiter's re-parenting, so the waiters are to be its
    direct children (the worker processes, nassau/engine/processes.py, are)."""

    def __init__(self) -> None:
        self._lock = multiprocessing.get_context("fork").Lock()
        self._maker = os.getpid()

    def __enter__(self) -> _ForkLock:
        while not self._lock.acquire(timeout=0.2):
            if os.getpid() != self._maker and os.getppid() != self._maker:  # re-parented: the maker is gone
                raise MakerGone("the process that shared this lock is gone")
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def process_lock() -> _ForkLock:
    """A lock that processes forked from here share (a POSIX semaphore; OSError where the system has none)."""
    return _ForkLock()


def _zeros(count: int, dtype, shared: bool) -> np.ndarray:
    """A zeroed array, private or in a shared anonymous mapping."""
    return shared_zeros(count, dtype) if shared else np.zeros(count, dtype=dtype)


def shared_zeros(count: int, dtype) -> np.ndarray:
    """A zeroed array in a shared anonymous mapping, which a fork shares rather than copies."""
    size = max(1, count * np.dtype(dtype).itemsize)
    return np.frombuffer(mmap.mmap(-1, size), dtype=dtype, count=count)
