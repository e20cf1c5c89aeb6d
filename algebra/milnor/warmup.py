"""A first run compiles on two cores: a helper process compiles the kernels a resolution needs last, or can do
without.

numba compiles a kernel when it is first called, one at a time, and writes it to its cache directory. On an empty
cache (the first run after installation) that is most of a small run: S_2 through stem 40 compiles for about 9 s in
one process. The resolution needs the product kernel first (3.4 s of compiling); a helper process started at once
compiles meanwhile, into the same cache, the small reductions that come next, the column moves, the matrix product
and the product tables' kernels (algebra.milnor.compile_helper), and the main process finds them there (numba writes
its cache files by atomic rename; a kernel the helper has not finished is compiled again by the main process, so the
race costs time, never a result). Until the helper is done the run makes no product tables (`helper_compiling`,
which algebra.milnor.product_tables asks): every product is enumerated, the same bits, and the tables start as soon
as the helper's marker appears. The marker ends it: later runs start nothing, and neither does a machine with one
core. At most one helper runs per cache: the starting process takes an exclusive lock on `warmup.lock` in the cache
(flock) before it starts one, and the helper inherits it and holds it until it exits, so runs started together (a
test suite, a shell loop) start one helper between them; the others wait for its marker as if it were theirs (a
marker written at the end could not do this: every run started before it appears would start a helper of its own).
What the helper runs is algebra.milnor.compile_helper; the command line's entry starts it (a process-wide choice,
made there and nowhere on import).
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from fp import kernel_cache

MARKER = "warmup.compiled"
#: Held (flock, exclusive) by the one helper running on a cache, from just before it starts until it exits.
LOCK = "warmup.lock"

_pending: _Pending | None = None


def start() -> bool:
    """Start the helper if the cache has not been warmed yet and no helper is running on it; True if it was started.
    Either way, while a helper (this one or another process's) compiles, this process defers its tables."""
    global _pending
    if kernel_cache.marked(MARKER) or (os.cpu_count() or 1) < 2:
        return False
    lock = _take_lock()
    if lock is None:  # a helper is running (or the cache cannot be written): wait for its marker as for our own
        _pending = _Pending()
        return False
    try:
        if kernel_cache.marked(MARKER):  # a helper finished between the first look and the lock
            return False
        # Run from the directory holding this package, so the helper imports the same files (numba keys its
        # cache by source path) and not a checkout that happens to be the working directory. The helper inherits
        # the locked descriptor and so holds the lock until it exits.
        subprocess.Popen([sys.executable, "-m", "algebra.milnor.compile_helper"],
                         cwd=Path(__file__).resolve().parents[2], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, pass_fds=(lock,))
    except OSError:  # no helper: the main process compiles everything, as it would anyway
        return False
    finally:
        os.close(lock)
    _pending = _Pending()
    return True


def _take_lock() -> int | None:
    """A descriptor holding the cache's helper lock, or None if a helper holds it or it cannot be made."""
    try:
        kernel_cache.CACHE_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(kernel_cache.CACHE_DIR / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _helper_running() -> bool:
    """Whether some process holds the cache's helper lock (a helper that died without its marker does not)."""
    fd = _take_lock()
    if fd is None:
        return (kernel_cache.CACHE_DIR / LOCK).exists()
    os.close(fd)
    return False


def helper_compiling() -> bool:
    """Whether the helper this process started or found running is still compiling (then no product tables are made
    yet)."""
    return _pending is not None and _pending()


class _Pending:
    """True while the helper's marker is missing and a helper holds the lock (looked up at most every 0.2 s); False
    for good once the marker is there or no helper is left to write it."""

    def __init__(self) -> None:
        self._done = False
        self._next = 0.0

    def __call__(self) -> bool:
        if self._done:
            return False
        now = time.monotonic()
        if now >= self._next:
            self._next = now + 0.2
            self._done = kernel_cache.marked(MARKER) or not _helper_running()
        return not self._done
