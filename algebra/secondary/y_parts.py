"""The Y-parts of the pair algebra in bulk: a composite's Y-parts laid out as one packed row (`YLayout`), and
A(Sq R, Y_{k,l}) for many (R, k, l) in one compiled call (`a_y_words`). The one-at-a-time twins are PairAlgebra's.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.kernels import SCRATCH
from algebra.milnor.ppart import MAX_LEN
from algebra.milnor.products import ProductBatch, run_batch
from algebra.secondary.pair_algebra import a_y_batch, row_words, y_products
from fp import from_bool, gf2_matmul, to_bool, words


class YLayout:
    """The Y-parts of composites of degree D as one packed row: a column segment per key (k, l), each the basis of
    G(D + 1 - 2^k - 2^l)."""

    def __init__(self, deg: int, low) -> None:
        self.keys = [(k, l) for l in range(MAX_LEN + 2) for k in range(l) if (1 << k) + (1 << l) <= deg + 1]
        self.low = low
        self.key_of = np.zeros((2 * MAX_LEN + 2, 2 * MAX_LEN + 2), dtype=np.int64)
        self.offsets, self.segments, start = [], [], 0
        for n, (k, l) in enumerate(self.keys):
            self.key_of[k, l] = n
            off = low.offsets(deg + 1 - (1 << k) - (1 << l))
            self.offsets.append(start + off)
            self.segments.append((start, int(off[-1])))
            start += int(off[-1])
        self.width = start

    def summed(self, basis: MilnorBasis, batch: ProductBatch, incidence: np.ndarray) -> np.ndarray:
        """The Y-parts of the batch's rows, summed per generator by the incidence (generators x rows)."""
        nrows = len(batch.row_r)
        ys = np.zeros((nrows, words(self.width)), dtype=np.uint64)
        if self.keys:
            key_col = np.column_stack([off[batch.term_gen] for off in self.offsets])
            rows, lefts, left_deg, lists, rights, right_deg, cols = y_products(
                batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
                key_col, self.key_of)
            run_batch(ys, ProductBatch(row_r=lefts, row_deg=left_deg, row_terms=lists,
                                       term_start=np.arange(len(rights) + 1, dtype=np.int64), term_s=rights,
                                       term_sdeg=right_deg, term_col=cols, row_out=rows), basis)
        return gf2_matmul(from_bool(incidence), ys, nrows, self.width)

    def parts(self, row: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
        """{key: packed Y-part} for the nonzero keys of one summed row."""
        out = {}
        bits = to_bool(row[None, :], self.width)[0]
        for key, (start, width) in zip(self.keys, self.segments, strict=True):
            if bits[start:start + width].any():
                out[key] = from_bool(bits[None, start:start + width])[0]
        return out


def a_y_words(basis: MilnorBasis, r_words: np.ndarray, r_degs: np.ndarray, ks: np.ndarray,
              ls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A(Sq R_i, Y_{k_i,l_i}) for many i (the twin is PairAlgebra.a_y), in one compiled call: the Milnor basis
    words of all of them concatenated, which i each came from (nondecreasing), and each i's degree."""
    degs = r_degs + (1 << ks) + (1 << ls) - 2
    top = int(degs.max())
    basis.extend(top)
    dims = basis.dimensions_array(degs)
    out = np.zeros((len(r_words), words(int(dims.max()))), dtype=np.uint64)
    a_y_batch(out, r_words.astype(np.uint64), r_degs.astype(np.int64), ks.astype(np.int64), ls.astype(np.int64),
              basis.rank_g, basis.index_map, basis.index_map_offset, np.zeros(SCRATCH, dtype=np.int64))
    found, owner = row_words(out, degs, basis.flat, basis.flat_offset)
    return found, owner, degs
