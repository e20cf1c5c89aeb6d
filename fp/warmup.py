"""A first run compiles on two cores: a helper process compiles the kernels a resolution needs last.

numba compiles a kernel when it is first called, one at a time, and writes it to its cache directory. On an empty
cache (the first run after installation) that is most of a small run: S_2 through stem 40 compiles for about 4 s.
The resolution needs the row reduction and the product kernel first; a helper process started at once compiles the
column moves and the matrix product into the same cache meanwhile, and the main process finds them there (numba
writes its cache files by atomic rename; a kernel the helper has not finished is compiled again by the main process,
so the race costs time, never a result). A marker file in the cache directory ends it: later runs start nothing,
and neither does a machine with one core.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import kernel_cache
from .masked import gather_columns, scatter_columns
from .matmul import gf2_matmul

MARKER = "warmup.compiled"


def start() -> bool:
    """Start the helper if the cache has not been warmed yet; True if it was started."""
    if kernel_cache.marked(MARKER) or (os.cpu_count() or 1) < 2:
        return False
    try:
        # Run from the directory holding this fp package, so the helper imports the same files (numba keys its
        # cache by source path) and not a checkout that happens to be the working directory.
        subprocess.Popen([sys.executable, "-m", "fp.warmup"], cwd=Path(__file__).resolve().parent.parent,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:  # no helper: the main process compiles everything, as it would anyway
        return False
    return True


def compile_kernels() -> None:
    """Call each kernel once with the argument types a resolution passes, which compiles and caches it."""
    a = np.zeros((2, 3), dtype=np.uint64)
    cols = np.array([1, 70, 130], dtype=np.int64)
    scatter_columns(gather_columns(a, cols), cols, 192)
    gf2_matmul(a, np.zeros((192, 2), dtype=np.uint64), 192, 128, parallel=False)


if __name__ == "__main__":
    compile_kernels()
    kernel_cache.mark(MARKER)
