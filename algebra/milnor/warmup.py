"""A first run compiles on two cores: a helper process compiles the kernels a resolution needs last, or can do
without.

numba compiles a kernel when it is first called, one at a time, and writes it to its cache directory. On an empty
cache (the first run after installation) that is most of a small run: S_2 through stem 40 compiles for about 9 s.
The resolution needs the row reduction and the product kernel first; a helper process started at once compiles the
column moves, the matrix product and the product tables' kernels (5 s alone) into the same cache meanwhile, and the
main process finds them there (numba writes its cache files by atomic rename; a kernel the helper has not finished
is compiled again by the main process, so the race costs time, never a result). Until the helper is done the run
makes no product tables (`helper_compiling`, which algebra.milnor.product_tables asks): every product is enumerated,
the same bits, and the tables start as soon as the helper's marker appears. The marker ends it: later runs start
nothing, and neither does a machine with one core. What the helper runs is algebra.milnor.compile_helper; the
command line's entry starts it (a process-wide choice, made there and nowhere on import).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from fp import kernel_cache

MARKER = "warmup.compiled"

_pending: _Pending | None = None


def start() -> bool:
    """Start the helper if the cache has not been warmed yet; True if it was started."""
    global _pending
    if kernel_cache.marked(MARKER) or (os.cpu_count() or 1) < 2:
        return False
    try:
        # Run from the directory holding this package, so the helper imports the same files (numba keys its
        # cache by source path) and not a checkout that happens to be the working directory.
        subprocess.Popen([sys.executable, "-m", "algebra.milnor.compile_helper"],
                         cwd=Path(__file__).resolve().parents[2], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:  # no helper: the main process compiles everything, as it would anyway
        return False
    _pending = _Pending()
    return True


def helper_compiling() -> bool:
    """Whether a helper this process started is still compiling (then no product tables are made yet)."""
    return _pending is not None and _pending()


class _Pending:
    """True while the helper's marker is missing (looked up at most every 0.2 s); False for good once it is there."""

    def __init__(self) -> None:
        self._done = False
        self._next = 0.0

    def __call__(self) -> bool:
        if self._done:
            return False
        now = time.monotonic()
        if now >= self._next:
            self._next = now + 0.2
            self._done = kernel_cache.marked(MARKER)
        return not self._done
