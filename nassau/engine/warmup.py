"""A first run compiles on two cores: a helper process compiles the kernels a resolution needs last, or can do
without.

numba compiles a kernel when it is first called, one at a time, and writes it to its cache directory. On an empty
cache (the first run after installation) that is most of a small run: S_2 through stem 40 compiles for about 9 s.
The resolution needs the row reduction and the product kernel first; a helper process started at once compiles the
column moves, the matrix product and the product tables' kernels (5 s alone) into the same cache meanwhile, and the
main process finds them there (numba writes its cache files by atomic rename; a kernel the helper has not finished
is compiled again by the main process, so the race costs time, never a result). Until the helper is done the run
makes no product tables (algebra.milnor.product_tables.defer_while): every product is enumerated, the same bits, and the
tables start as soon as the helper's marker appears. The marker ends it: later runs start nothing, and neither
does a machine with one core.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from algebra.milnor import product_tables
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.products import ProductBatch, run_batch
from fp import kernel_cache
from fp.masked import gather_columns, scatter_columns
from fp.matmul import gf2_matmul

MARKER = "warmup.compiled"


def start() -> bool:
    """Start the helper if the cache has not been warmed yet; True if it was started."""
    if kernel_cache.marked(MARKER) or (os.cpu_count() or 1) < 2:
        return False
    try:
        # Run from the directory holding this package, so the helper imports the same files (numba keys its
        # cache by source path) and not a checkout that happens to be the working directory.
        subprocess.Popen([sys.executable, "-m", "nassau.engine.warmup"], cwd=Path(__file__).resolve().parents[2],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError:  # no helper: the main process compiles everything, as it would anyway
        return False
    product_tables.defer_while(_Pending())
    return True


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


def compile_kernels() -> None:
    """Call each kernel once with the argument types a resolution passes, which compiles and caches it."""
    a = np.zeros((2, 3), dtype=np.uint64)
    cols = np.array([1, 70, 130], dtype=np.int64)
    scatter_columns(gather_columns(a, cols), cols, 192)
    gf2_matmul(a, np.zeros((192, 2), dtype=np.uint64), 192, 128, parallel=False)
    basis = MilnorBasis()
    basis.extend(30)
    product_tables.use_tables(basis, 1 << 20)
    words = basis.words(27)  # 32 rows: a batch large enough to make its tables (products.SMALL_BATCH)
    batch = ProductBatch(row_r=words, row_deg=np.full(len(words), 27, dtype=np.int64),
                         row_terms=np.zeros(len(words), dtype=np.int64), term_start=np.array([0, 1], dtype=np.int64),
                         term_s=basis.words(3)[:1], term_sdeg=np.array([3], dtype=np.int64),
                         term_col=np.zeros(1, dtype=np.int64))
    run_batch(np.zeros((len(words), 1), dtype=np.uint64), batch, basis)  # makes a table: every kernel it needs


if __name__ == "__main__":
    compile_kernels()
    kernel_cache.mark(MARKER)
