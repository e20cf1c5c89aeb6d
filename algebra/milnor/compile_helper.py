"""What a first run's helper process runs (algebra.milnor.warmup): each kernel it takes over called once with the
argument types a resolution passes, which compiles it into numba's cache, then the marker that ends the wait.

First the small reductions and a Nassau step's correction, which the main process reaches right after it has
compiled the product kernel (about 3.5 s in): compiled here meanwhile (about 1.5 s), they are in the cache when it
asks, off its path; then the column moves and the matrix product, last the product tables, which it can do without."""
from __future__ import annotations

import numpy as np

from algebra.milnor import product_tables, warmup
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.products import ProductBatch, run_batch
from fp import kernel_cache
from fp.m4ri import small_kernel
from fp.masked import any_in_columns, gather_columns, scatter_columns
from fp.matmul import gf2_matmul
from fp.quasi_inverse import QuasiInverse


def compile_kernels() -> None:
    """Call each kernel once with the argument types a resolution passes, which compiles and caches it."""
    a = np.zeros((2, 3), dtype=np.uint64)
    cols = np.array([1, 70, 130], dtype=np.int64)
    image, preimages, _, _ = small_kernel(np.eye(2, dtype=np.uint64), 2)
    rows = np.arange(2, dtype=np.int64)
    QuasiInverse(image, preimages, 2).correct(np.zeros((1, 1), dtype=np.uint64), rows, rows,
                                              np.zeros((2, 1), dtype=np.uint64), np.zeros((1, 1), dtype=np.uint64))
    any_in_columns(a, cols)
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
    kernel_cache.mark(warmup.MARKER)
