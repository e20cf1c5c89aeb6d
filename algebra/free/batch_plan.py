"""Batches of Milnor products over free modules built from term lists: what a lift that multiplies many vectors by
many composites hands the product kernel in one call (the secondary lifts' A-terms and composites).

A term list is the terms P(S) h of a vector (packed S, target generator h, degree of S); many lists go one after
another with their lengths (`TermLists`). `compact` keeps only the lists a batch's rows use, and `BatchPlan`
gathers rows "P(R) times list k, owned by pair i" from several sources and makes every product in one compiled
call, summed per pair as it is made.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from algebra.milnor.products import ProductBatch, run_batch
from fp import F2, gf2_matmul, words


class TermLists(NamedTuple):
    """Consecutive term lists: their terms P(S) h (packed S, generator h, degree of S) and each list's length."""

    term_s: np.ndarray
    gens: np.ndarray
    sdeg: np.ndarray
    lengths: np.ndarray


def terms_of(vec: np.ndarray, deg: int, low) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The terms P(S) h of a packed vector over low in degree deg: (packed S, generator h, degree of S)."""
    gens, ws = low.words_at(deg, F2().support(vec[None, :]))
    return ws, gens, deg - low.gen_degrees[gens]


def term_lists(lists: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> TermLists:
    """The term lists (each as terms_of gives it) one after the other."""
    if not lists:
        return TermLists(np.zeros(0, dtype=np.uint64), *(np.zeros(0, dtype=np.int64) for _ in range(3)))
    return TermLists(*(np.concatenate([terms[i] for terms in lists]) for i in range(3)),
                     np.array([len(terms[0]) for terms in lists], dtype=np.int64))


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ranges starts[j] .. starts[j] + lengths[j] - 1, one after the other."""
    before = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - before, lengths)


def compact(batch: ProductBatch) -> ProductBatch:
    """The batch with only the term lists its rows use, renumbered (so per-term tables stay small); term_gen
    names each kept term's target generator, term_col its column."""
    lists = np.unique(batch.row_terms)
    starts, ends = batch.term_start[lists], batch.term_start[lists + 1]
    take = concat_ranges(starts, ends - starts)
    new_start = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64)
    remap = np.searchsorted(lists, batch.row_terms)
    out = ProductBatch(row_r=batch.row_r, row_deg=batch.row_deg, row_terms=remap.astype(np.int64),
                       term_start=new_start, term_s=batch.term_s[take], term_sdeg=batch.term_sdeg[take],
                       term_col=batch.term_col[take])
    out.term_gen = batch.term_gen[take]
    return out


def per_row(value, n: int) -> np.ndarray:
    """An int (the same for every row) or one per row, as n int64s (np.full: a tenth of broadcast_to's cost)."""
    return np.full(n, value, dtype=np.int64) if np.isscalar(value) else np.asarray(value, dtype=np.int64)


class BatchPlan:
    """The rows L x V of some A-terms: each V's terms become a term list, each row belongs to one distinct term
    Sq(R) y (a "pair"), and one compiled call makes every product, summed per pair as it is made."""

    def __init__(self, out_off: np.ndarray) -> None:
        self.out_off = out_off
        self.blocks: list[TermLists] = []
        self.nlists = 0
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, *blocks: TermLists) -> int:
        """Add term lists (each list's terms in generator order); the first one's number."""
        first = self.nlists
        self.blocks.extend(blocks)
        self.nlists += sum(len(b.lengths) for b in blocks)
        return first

    def rows(self, pairs: np.ndarray, lefts: np.ndarray, deg, lst) -> None:
        """Rows lefts[i] x term list lst (an int, or one per row) in degree deg (likewise), row i's products
        belonging to pairs[i]."""
        self.chunks.append((pairs, lefts, per_row(deg, len(lefts)), per_row(lst, len(lefts))))

    def run(self, basis, incidence: np.ndarray, npairs: int) -> np.ndarray:
        """For each row of the packed incidence (rows x pairs): the sum of its pairs' products, packed."""
        width = int(self.out_off[-1])
        if not self.chunks:
            return np.zeros((incidence.shape[0], words(width)), dtype=np.uint64)
        term_s, gens, sdeg, lengths = (np.concatenate(parts) for parts in zip(*self.blocks, strict=True))
        if len(gens) and int(gens.max()) >= len(self.out_off) - 1:  # checked once here, not per list
            raise AssertionError("an A-term reaches a generator beyond the output's")
        pairs, lefts, degs, lists = (np.concatenate(parts) for parts in zip(*self.chunks, strict=True))
        batch = ProductBatch(row_r=lefts.astype(np.uint64), row_deg=degs, row_terms=lists,
                             term_start=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                             term_s=term_s.astype(np.uint64), term_sdeg=sdeg.astype(np.int64),
                             term_col=self.out_off[gens].astype(np.int64), row_out=pairs.astype(np.int64))
        per_pair = np.zeros((npairs, words(width)), dtype=np.uint64)
        run_batch(per_pair, batch, basis)
        return gf2_matmul(incidence, per_pair, npairs, width)
