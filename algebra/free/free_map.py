"""Maps of free modules F -> G, given on generators, and their matrices built by batched products.

Each generator's image d(g) is kept as a term list (coefficient c, P(S), target generator h), so a matrix
row P(R) g is the sum of c P(R) P(S) placed in h's block. Vectors and matrices live over the algebra's field:
packed F2 rows at p = 2 (every c is 1), dense F_p rows at odd p (fp.field). A matrix build turns a whole set of rows
into one ProductBatch and makes one compiled call, whatever the number of rows or products.

A map may lower degrees by a fixed `shift` (F_t -> G_{t - shift}): differentials have shift 0, the maps of
a lifted chain map the internal degree of the class they lift.
"""
from __future__ import annotations

import threading

import numpy as np

from algebra.free.free_module import FreeModule
from algebra.milnor.product_tables import tables_for
from algebra.milnor.products import SDEG, ProductBatch, TermTables, run_batch
from fp import field
from fp.packed import stack


class FreeMap:
    def __init__(self, source: FreeModule, target: FreeModule, shift: int = 0) -> None:
        self.source = source
        self.target = target
        self.shift = shift
        self._lock = threading.Lock()
        # Flat term lists: generator k's terms are term_start[k]:term_start[k+1], in narrow integers (a resolution
        # through stem 120 holds 3 million terms: 15 bytes each, not 32).
        self.term_start = np.zeros(1, dtype=np.int64)
        self.term_s = np.zeros(0, dtype=np.uint64)
        self.term_sdeg = np.zeros(0, dtype=SDEG)
        self.term_gen = np.zeros(0, dtype=np.int32)
        self.term_coef = np.zeros(0, dtype=np.uint8)
        self.field = field(source.algebra.prime)
        self._outputs: list[np.ndarray] = []
        self._output_ngens: list[int] = []

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def output(self, gen: int) -> tuple[np.ndarray, int]:
        """d(gen) as a packed vector over the target basis in degree deg(gen) - shift, and how many target
        generators that basis spans."""
        return self._outputs[gen], self._output_ngens[gen]

    def outputs(self, first: int, last: int) -> np.ndarray:
        """d(g) for the generators first <= g < last as the rows of one array over the field, zero-padded to the
        widest."""
        return stack([self._outputs[g] for g in range(first, last)], self.field.dtype)

    def add_outputs(self, degree: int, vectors: np.ndarray, target_ngens: int) -> None:
        """Record d of the next generators (all of `degree`); vectors are packed over target_ngens' basis in
        degree - shift."""
        gens, ws = self.target.basis_words(degree - self.shift, target_ngens)
        sdeg_all = degree - self.shift - self.target.gen_degrees[gens] if len(gens) else np.zeros(0, dtype=np.int64)
        new_s, new_deg, new_gen, new_coef, counts = [], [], [], [], []
        n = len(gens)
        entries = self.field.to_ints(np.asarray(vectors).reshape(len(vectors), -1), n) if len(vectors) else []
        for row in entries:
            hit = row != 0
            new_s.append(ws[hit])
            new_deg.append(sdeg_all[hit].astype(SDEG))
            new_gen.append(gens[hit].astype(np.int32))
            new_coef.append(row[hit].astype(np.uint8))
            counts.append(int(hit.sum()))
        with self._lock:
            if self.num_outputs + len(vectors) > self.source.num_gens:
                raise ValueError("outputs given for generators the source does not have")
            self._outputs.extend(np.array(v, copy=True) for v in vectors)
            self._output_ngens.extend([target_ngens] * len(vectors))
            if counts:
                self.term_s = np.concatenate([self.term_s, *new_s])
                self.term_sdeg = np.concatenate([self.term_sdeg, *new_deg])
                self.term_gen = np.concatenate([self.term_gen, *new_gen])
                self.term_coef = np.concatenate([self.term_coef, *new_coef])
                self.term_start = np.concatenate([self.term_start, self.term_start[-1] + np.cumsum(counts)])

    def batch(self, t: int, rows: np.ndarray, target_gens: np.ndarray | None = None) -> ProductBatch:
        """The products behind the given source rows (full-basis indices in degree t); target_gens (a mask over the
        target's generators): only the terms on those generators, the products in the other blocks not made."""
        src = self.source
        gens, r_words = src.words_at(t, rows)
        rdeg = t - src.gen_degrees[gens]
        # Only the term lists up to the last generator the rows name: every term's column is looked up per batch.
        last = int(gens.max()) + 1 if len(gens) else 0
        with self._lock:
            term_start = self.term_start[:last + 1]
            end = int(term_start[-1])
            term_s, term_sdeg, term_gen = self.term_s[:end], self.term_sdeg[:end], self.term_gen[:end]
            coef = self.term_coef[:end] if self.field.p != 2 else None
        if target_gens is not None:
            keep = np.asarray(target_gens, dtype=bool)[term_gen]
            term_start = np.concatenate([[0], np.cumsum(keep)])[term_start]
            term_s, term_sdeg, term_gen = term_s[keep], term_sdeg[keep], term_gen[keep]
            coef = None if coef is None else coef[keep]
        # Offsets of every target generator known now (a superset of those the terms name); the rows only
        # reach the first target_ngens of them.
        tgt_off = self.target.product_offsets(t - self.shift)
        return ProductBatch(row_r=r_words, row_deg=rdeg, row_terms=gens.astype(np.int64), term_start=term_start,
                            term_s=term_s, term_sdeg=term_sdeg, term_col=tgt_off[term_gen], term_coef=coef,
                            term_gen=term_gen)

    def term_tables(self, t: int, ngens: int) -> TermTables | None:
        """The product tables of the first ngens source generators' terms for rows in degree t, found once for the
        many batches a step builds in that degree."""
        with self._lock:
            term_start, term_s, term_sdeg = self.term_start, self.term_s, self.term_sdeg
        end = int(term_start[min(ngens, len(term_start) - 1)])
        owner = np.repeat(np.arange(len(term_start) - 1), np.diff(term_start))[:end]
        n = t - self.source.gen_degrees[owner]
        snap, tids = tables_for(self.source.algebra).ensure_keys(term_s[:end], n, term_sdeg[:end])
        return TermTables(t, snap, tids)

    def matrix(self, t: int, rows: np.ndarray | None = None, target_ngens: int | None = None,
               col_map: np.ndarray | None = None, ncols: int | None = None,
               forbid: np.ndarray | None = None, tables: TermTables | None = None,
               target_gens: np.ndarray | None = None) -> np.ndarray:
        """Matrix of this map in degree t (over its field): one row per given source basis index (default: all).

        target_ngens restricts the columns to the blocks of the first target generators; col_map (with
        ncols) restricts them further to a column mask, and forbid prunes products outside it early; target_gens
        (a mask over the target's generators, covering every column col_map keeps) leaves out the terms on the
        others, whose products col_map would drop. Over an unstable free module the target's own map drops the
        terms of too large excess. `tables` (term_tables of degree t) saves looking up the product tables again.
        """
        if rows is None:
            rows = np.arange(self.source.dimension(t, self.num_outputs), dtype=np.int64)
        width = self.target.dimension(t - self.shift, target_ngens) if col_map is None else ncols
        if col_map is None:
            col_map = self.target.excess_columns(t - self.shift, target_ngens)
        out = self.field.zeros(len(rows), width)
        if tables is not None and target_gens is not None:
            raise ValueError("product tables of a degree's terms cannot be read with some of the terms left out")
        if tables is not None and tables.degree != t:
            raise ValueError(f"product tables for degree {tables.degree} used in degree {t}")
        if len(rows):
            run_batch(out, self.batch(t, rows, target_gens), self.source.algebra, col_map, forbid, tables)
        return out

    def apply(self, t: int, vectors: np.ndarray, target_ngens: int | None = None,
              tables: TermTables | None = None) -> np.ndarray:
        """The map applied to vectors over the source in degree t (over as many source generators as the
        rows' width covers): one matrix build on the rows the vectors use, then one product over the field."""
        f = self.field
        support = f.support(vectors)
        width = self.target.dimension(t - self.shift, target_ngens)
        if len(support) == 0:
            return f.zeros(vectors.shape[0], width)
        return f.matmul(f.gather(vectors, support), self.matrix(t, support, target_ngens, tables=tables),
                        len(support), width)
