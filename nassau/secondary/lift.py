"""The one secondary lift behind d2, secondary products and secondary Massey products (REFERENCE-SECONDARY 3.1).

Each lift witnesses an identity sum_i c_i g_i f_i = 0 between maps of free resolutions F -> G (f applied first,
c_i = 1 or 3 in Z/4) in the secondary Steenrod algebra. Lifted to B_0 the composite
C_s(x) = sum_i c_i sigma(g_i) sigma(f_i)(x) of a generator x of F_s is a kernel element of B_0 (x) G_{s - s_h}
(its Z/4 part is even), and the lift is a homotopy h_s: F_s -> G_{s - s_h}, a generator of degree t going to degree
t - t_h - 1, zero at s = s_h, with

    d h_s(x) = h_{s-1}(d x) + sum over the terms a y of d x of A(a, C_{s-1}(y)) + (terms of the particular lift).

So h is a chain map of shift (s_h, t_h + 1) whose cycles carry the A-terms (the "intermediate"): the lifting
engine of nassau.lifting.chain_map lifts it, one preimage call per output bidegree. A subclass names its composite
(`composite_terms`), its further terms (`extra_terms`) and what must be lifted before a bidegree can be
(`inputs_ready`); lift the maps it reads first. The resolution's own lift (nassau.secondary.homotopy) gives d2, the lift
of a product map (nassau.secondary.homomorphism) secondary products, the lift of a null-homotopy
(nassau.secondary.massey) secondary Massey products.

Composites of a bidegree are three compiled calls (Z/4 parts, Y-parts, sums per generator); the A-terms of many
vectors are one product batch (`act`). `Composites.twin` and PairAlgebra.a_multiply are the one-at-a-time twins.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from algebra.free.batch_plan import BatchPlan, TermLists, compact, concat_ranges, term_lists, terms_of
from algebra.free.free_map import FreeMap
from algebra.milnor.ppart import FIELD_MASK
from algebra.secondary.pair_algebra import Element, PairAlgebra, add_incidence_sums
from algebra.secondary.y_parts import YLayout, a_y_words
from algebra.secondary.z4_memo import z4_memo_for
from fp import F2, from_bool, gather_columns, to_bool, words
from fp.packed import mask_padding
from nassau.engine.preimages import Preimages
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap

#: The bits of r_1 in a packed Milnor word.
R1_MASK = int(FIELD_MASK[0])
#: (coefficient in Z/4, f, g): the composite g f, f applied first.
Term = tuple[int, FreeMap, FreeMap]


class SecondaryError(ValueError):
    """A secondary lift cannot be made (odd prime, profile, an obstruction, or input that does not lift)."""


@dataclass
class Composite:
    """C_s(x) on one generator x of F_s, finalized (its Z/4 part even): twos, packed over G(D) with D = deg x - t_h,
    and for each key (k, l) the Y-part, packed over G(D + 1 - 2^k - 2^l)."""

    degree: int
    twos: np.ndarray
    ys: dict[tuple[int, int], np.ndarray]
    _terms: dict[str, object] = field(default_factory=dict)  # twos_terms and y_terms, made once

    def twos_terms(self, low) -> TermLists:
        """The terms of twos as one term list, computed once."""
        hit = self._terms.get("twos")
        if hit is None:
            hit = self._terms["twos"] = term_lists([terms_of(self.twos, self.degree, low)])
        return hit

    def y_terms(self, low) -> tuple[np.ndarray, np.ndarray, TermLists]:
        """Every Y-part's key (k's, l's) and terms, one term list per key in the order of ys, computed once."""
        hit = self._terms.get("ys")
        if hit is None:
            keys = np.array(list(self.ys), dtype=np.int64).reshape(-1, 2)
            lists = term_lists([terms_of(vec, self.degree + 1 - (1 << k) - (1 << l), low)
                                 for (k, l), vec in self.ys.items()])
            hit = self._terms["ys"] = (keys[:, 0].copy(), keys[:, 1].copy(), lists)
        return hit


class Composites:
    """The composites of a lift's generators, a bidegree at a time, kept; `twin` is the product-at-a-time version
    the tests compare."""

    def __init__(self, lift: SecondaryLift) -> None:
        self.lift = lift
        self._lock = threading.Lock()
        self._done: dict[tuple[int, int], dict[int, Composite]] = {}

    def __call__(self, s: int, g: int) -> Composite:
        t = int(self.lift.source.free(s).gen_degrees[g])
        with self._lock:
            hit = self._done.get((s, t))
        if hit is None:
            hit = self._bidegree(s, t)
            with self._lock:
                hit = self._done.setdefault((s, t), hit)
        return hit[g]

    def _bidegree(self, s: int, t: int) -> dict[int, Composite]:
        lift = self.lift
        basis = lift.source.algebra
        fs, low = lift.source.free(s), lift.target.free(s - lift.s_shift)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        deg = t - lift.st
        width = low.dimension(deg)
        layout = YLayout(deg, low)
        memo = z4_memo_for(basis)
        totals = np.zeros((last - first, width), dtype=np.int64)
        ys = np.zeros((last - first, words(layout.width)), dtype=np.uint64)
        for coef, f, g in lift.composite_terms(s):
            mid, deg_mid = f.target, t - f.shift
            support = np.zeros((last - first, mid.dimension(deg_mid)), dtype=bool)
            for row, x in enumerate(range(first, last)):
                vec, ngens = f.output(x)
                cols = mid.dimension(deg_mid, ngens)
                support[row, :cols] = to_bool(vec[None, :], cols)[0]
            # g is not defined on the middle generators below its degree shift (their columns come first)
            support[:, :mid.offsets(deg_mid)[mid.gens_below(g.shift)]] = False
            used = np.nonzero(support.any(axis=0))[0]
            if not len(used):
                continue
            batch = compact(g.batch(deg_mid, used))
            z4 = np.zeros((len(used), width), dtype=np.int8)
            memo.multiply(z4, batch)
            incidence = support[:, used]
            add_incidence_sums(totals, incidence, z4, coef)
            ys ^= layout.summed(basis, batch, incidence)
        if (totals % 2).any():
            g = first + int(np.nonzero((totals % 2).any(axis=1))[0][0])
            raise SecondaryError(f"the lifted composite of {lift.name} on {fs.gen_names[g]} is not in the kernel")
        twos = from_bool((totals // 2).astype(bool))
        return {g: Composite(deg, twos[row], layout.parts(ys[row])) for row, g in enumerate(range(first, last))}

    def twin(self, s: int, g: int) -> dict[int, Element]:
        """C_s(g) by sigma products one at a time: {G generator: kernel element}."""
        lift = self.lift
        unpack = lift.source.algebra.unpack
        low = lift.target.free(s - lift.s_shift)
        deg = int(lift.source.free(s).gen_degrees[g]) - lift.st
        out: dict[int, Element] = {}
        for coef, f, gmap in lift.composite_terms(s):
            for k in range(int(f.term_start[g]), int(f.term_start[g + 1])):
                mid = int(f.term_gen[k])
                if f.target.gen_degrees[mid] < gmap.shift:
                    continue
                a = unpack(int(f.term_s[k]))
                for q in range(int(gmap.term_start[mid]), int(gmap.term_start[mid + 1])):
                    z = int(gmap.term_gen[q])
                    if z not in out:
                        out[z] = lift.pair.zero(deg - int(low.gen_degrees[z]))
                    out[z].add(lift.pair.sigma_product(a, unpack(int(gmap.term_s[q]))), coef)
        return out


class SecondaryLift(ChainMap):
    """h: F -> G of shift (s_h, t_h), h_s: F_s -> G_{s - s_h} lowering degrees by t_h + 1, zero at s = s_h."""

    #: What a failed check at s = s_h + 1 means for this lift (the reference checks that level only).
    failure = "the input does not lift"

    def __init__(self, source: Resolution, target: Resolution, shift: tuple[int, int], region: Region,
                 name: str = "") -> None:
        s_h, t_h = shift

        def zero(t: int) -> np.ndarray:
            return np.zeros((source.new_gens.get((s_h, t), 0), target.module.dimension(t - t_h - 1)), dtype=np.uint8)

        super().__init__(source, target, (s_h, t_h + 1), zero, region, name)
        self.st = t_h
        self.pair = PairAlgebra(source.algebra)
        self.composites = Composites(self)
        self._checks: dict[tuple[int, int], np.ndarray] = {}

    # -- what a subclass says ------------------------------------------------------------------------------
    def composite_terms(self, s: int) -> list[Term]:
        """(c, f, g) with C_s = sum c sigma(g) sigma(f): F_s -> G_{s - s_h}, lowering degrees by t_h."""
        raise NotImplementedError

    def extra_terms(self, s: int, t: int, ngens: int) -> np.ndarray | None:
        """The lift's own terms of d h_s(x) beyond h_{s-1}(d x) and the A-terms, for the generators x of F_s in
        degree t: packed rows over G_{s-s_h-1}(t - t_h - 1)'s first ngens generators (None: no such terms)."""
        return None

    def inputs_ready(self, s: int, t: int) -> bool:
        """Whether the maps the cycles at (s, t) read are lifted there (s > s_h)."""
        return True

    # -- the A-terms -----------------------------------------------------------------------------------------
    def act(self, s: int, degree: int, vectors: np.ndarray, ngens: int, full: bool = False) -> np.ndarray:
        """For each row v = sum a y (a vector of F_s in `degree`): sum A(a, C_s(y)), and with `full` also h_s(v),
        packed over G_{s-s_h}(degree - t_h - 1)'s first ngens generators.

        Each distinct term a y of the rows is expanded once, every product is one batch, and the rows' sums are one
        product with the incidence of terms."""
        fs, low = self.source.free(s), self.target.free(s - self.s_shift)
        out_off = low.offsets(degree - self.st - 1, ngens)
        width = int(out_off[-1])
        out = np.zeros((len(vectors), words(width)), dtype=np.uint64)
        cols = F2().support(vectors)
        if len(cols):
            gens, ws = fs.words_at(degree, cols, fs.gens_below(degree + 1))
            gdeg = fs.gen_degrees[gens]
            # A(1, x) = 0, and the composite of a generator whose image degree lies below G's bottom is zero
            live = (gdeg < degree) & (gdeg - self.st >= self.target.min_degree)
            if live.any():
                out ^= self._a_terms(s, degree, ws[live], gens[live], gather_columns(vectors, cols[live]), out_off)
        if full:
            out ^= self.free_map(s).apply(degree, vectors, ngens)
        return out

    def _a_terms(self, s: int, degree: int, r_words: np.ndarray, r_gens: np.ndarray, incidence: np.ndarray,
                 out_off: np.ndarray) -> np.ndarray:
        """Rows of `incidence` (packed over the terms Sq(R) y given by r_words, r_gens) -> their A-terms.

        The terms are taken a generator y at a time, its composite's parts being term lists met once, and the
        A(Sq R, Y_{k,l}) of every R and key are one compiled call, so nothing runs in Python per term or key."""
        fs, low = self.source.free(s), self.target.free(s - self.s_shift)
        basis = self.source.algebra
        plan = BatchPlan(out_off)
        order = np.argsort(r_gens, kind="stable")
        gens, starts, counts = np.unique(r_gens[order], return_index=True, return_counts=True)
        # Per generator: its twos' term list (-1: none); with Y-parts, its term lists, their k's and l's, and (first
        # pair, pairs, deg R, lists).
        twos_list = np.full(len(gens), -1, dtype=np.int64)
        blocks, part_k, part_l, per_gen = [], [], [], []
        for u, (y, start, n) in enumerate(zip(gens.tolist(), starts.tolist(), counts.tolist(), strict=True)):
            comp = self.composites(s, y)
            if comp.twos.any():
                twos_list[u] = plan.add(comp.twos_terms(low))
            ks, ls, lists = comp.y_terms(low)
            if len(ks):
                blocks.append(lists)
                part_k.append(ks)
                part_l.append(ls)
                per_gen.append((start, n, degree - int(fs.gen_degrees[y]), len(ks)))
        # Sq(R - e_1) twos for r_1 >= 1 (one less in the lowest field), every generator's pairs in one chunk.
        pair_list = np.repeat(twos_list, counts)
        ws = r_words[order].astype(np.uint64)
        take = (pair_list >= 0) & ((ws & np.uint64(R1_MASK)) != 0)
        if take.any():
            r_deg = np.repeat(degree - fs.gen_degrees[gens], counts)
            plan.rows(order[take], ws[take] - np.uint64(1), r_deg[take] - 1, pair_list[take])
        if blocks:
            # Every (R, key) of every generator, key by key: the generator's pairs once per Y-part.
            first = plan.add(*blocks)
            gen_start, gen_n, gen_d, gen_parts = np.array(per_gen, dtype=np.int64).T
            part_n = np.repeat(gen_n, gen_parts)
            part = np.repeat(np.arange(len(part_n), dtype=np.int64), part_n)
            pairs = order[concat_ranges(np.repeat(gen_start, gen_parts), part_n)]
            lefts, owner, degs = a_y_words(basis, r_words[pairs], np.repeat(gen_d, gen_parts)[part],
                                           np.concatenate(part_k)[part], np.concatenate(part_l)[part])
            plan.rows(pairs[owner], lefts, degs[owner], first + part[owner])
        return plan.run(basis, incidence, len(r_words))

    def intermediate(self, s: int, t: int, ngens: int) -> np.ndarray:
        """Everything but h_{s-1}(d x) in d h_s(x), for the generators x of F_s in degree t: the A-terms of C_{s-1}
        on d x and the lift's own terms, packed over G_{s-s_h-1}(t - t_h - 1)'s first ngens generators."""
        fs = self.source.free(s)
        dx = self.source.differential(s).outputs(fs.gens_below(t), fs.gens_below(t + 1))
        out = self.act(s - 1, t, dx, ngens)
        extra = self.extra_terms(s, t, ngens)
        if extra is not None:
            out ^= extra
        return out

    # -- lifting (the chain-map engine calls these) -------------------------------------------------------------
    def ready(self, s: int, t: int) -> bool:
        return super().ready(s, t) and (s == self.s_shift or self.inputs_ready(s, t))

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        base = super().cycles(s, t, preimages)
        if s == self.s_shift:
            return base
        g_s, tt = s - self.s_shift, t - self.t_shift
        lower = self.target.free(g_s - 1)
        full = self.intermediate(s, t, lower.gens_below(tt + 1))
        if s == self.s_shift + 1:
            self._checks[(s, t)] = full.copy()
        width = lower.dimension(tt, preimages.target_ngens(g_s, tt))
        out = full[:, :words(width)].copy()
        mask_padding(out, width)  # terms on generators of degree tt: a cycle has none, the preimage ignores them
        return out ^ base

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        wanted = self._checks.pop((s, t), None)
        if wanted is not None and len(images):
            g_s, tt = s - self.s_shift, t - self.t_shift
            got = self.target.differential(g_s).apply(tt, images, self.target.free(g_s - 1).gens_below(tt + 1))
            width = max(got.shape[1], wanted.shape[1])
            if not np.array_equal(_pad(got, width), _pad(wanted, width)):
                raise SecondaryError(f"failed to lift at (n={t - s}, s={s}): {self.failure}")
        super().record(s, t, images, ngens)


def _pad(rows: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((rows.shape[0], width), dtype=np.uint64)
    out[:, :rows.shape[1]] = rows
    return out
