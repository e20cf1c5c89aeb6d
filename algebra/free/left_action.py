"""The matrix of left multiplication by a Milnor basis element on a free module, in one batched product call.

theta (P(R) g) = (theta P(R)) g: row i of the matrix is theta times the i-th basis element of F(t), over F(t + deg
theta). Built as one ProductBatch with theta as every row's left factor and one term (P(R) at g's block) per row,
so no product is made one at a time in Python. Yoneda representatives and their tensor squares act through it.
"""
from __future__ import annotations

import numpy as np

from algebra.free.free_module import FreeModule
from algebra.milnor.ppart import degree, pack
from algebra.milnor.products import ProductBatch, run_batch
from fp import words


def left_multiplication(module: FreeModule, theta: tuple[int, ...], t: int, ngens: int,
                        rows: np.ndarray | None = None) -> np.ndarray:
    """Packed (rows of F(t) over the first ngens generators) x dim F(t + deg theta) (same generators)."""
    e = degree(theta)
    off = module.offsets(t, ngens)
    if rows is None:
        rows = np.arange(int(off[-1]), dtype=np.int64)
    out_off = module.offsets(t + e, ngens)
    out = np.zeros((len(rows), words(int(out_off[-1]))), dtype=np.uint64)
    if len(rows) == 0:
        return out
    gens = np.searchsorted(off, rows, side="right") - 1
    rdeg = t - module.gen_degrees[gens]
    r_words = module.algebra.flat_words(rdeg, rows - off[gens])
    module.algebra.extend(t + e - int(module.gen_degrees[:ngens].min(initial=t)))
    n = len(rows)
    batch = ProductBatch(row_r=np.full(n, np.uint64(pack(theta)), dtype=np.uint64), row_deg=np.full(n, e),
                         row_terms=np.arange(n, dtype=np.int64), term_start=np.arange(n + 1, dtype=np.int64),
                         term_s=r_words, term_sdeg=rdeg.astype(np.int64), term_col=out_off[gens].astype(np.int64))
    run_batch(out, batch, module.algebra)
    return out
