"""The secondary resolution and the Adams d2 (REFERENCE-SECONDARY 1.2, 3), at p = 2.

Lifting d_{s-1} d_s to the secondary Steenrod algebra leaves, on each generator g of F_s, a kernel element
C_s(g) = sigma(d_{s-1}) sigma(d_s) g of B_0 (x) F_{s-2} (the composite). Homotopies h_s: F_s -> F_{s-2} of degree
-1 with h_2 = 0 and

    d_{s-2} h_s(g) = h_{s-1}(d_s g) + sum over the terms a g' of d_s g of A(a, C_{s-1}(g'))        (*)

are lifted through the quasi-inverses of d_{s-2} in degree t - 1: a chain map of shift (2, 1) whose cycles carry
the A-terms (the intermediate), so the one lifting engine (nassau.chain_map) does it, batched per bidegree.
Then d2(x_j) for x_j in Ext^{s,t} has coefficient, at a generator g' of F_{s+2} in degree t + 1, the coefficient
of 1 g_j in h_{s+2}(g'). d2 depends only on the resolution, not on the quasi-inverses chosen.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from algebra.milnor_kernels import SCRATCH
from charts.model import Differential
from algebra.module import Module
from algebra.pair_algebra import Element, PairAlgebra, a_y_batch, binomials_mod4, y_batch, z4_batch
from algebra.ppart import FIELD_MASK, MAX_LEN
from algebra.products import ProductBatch, run_batch
from fp import from_bool, gf2_matmul, to_bool, words
from nassau.chain_map import ChainMap, lift
from nassau.quasi_inverses import LiftError, Preimages
from nassau.region import Region
from nassau.resolution import Resolution


#: The bits of r_1 in a packed Milnor word.
R1_MASK = int(FIELD_MASK[0])


class SecondaryError(ValueError):
    """The secondary lift cannot be made (odd prime, profile, or an obstruction at s = 3)."""


@dataclass
class Composite:
    """C_s(g) on one generator g of F_s (degree t), finalized (its Z/4 part even): twos, packed over F_{s-2}(t), and
    for each key (k, l) the Y-part, packed over F_{s-2}(t + 1 - 2^k - 2^l)."""

    twos: np.ndarray
    ys: dict[tuple[int, int], np.ndarray]
    _terms: dict[object, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)

    def part(self, key: tuple[int, int] | None, low, deg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The terms P(S) h of twos (key None) or of the Y-part `key`, a vector of F_{s-2} in degree deg:
        (packed S, generator h, degree of S), computed once."""
        hit = self._terms.get(key)
        if hit is None:
            vec = self.twos if key is None else self.ys[key]
            gens, ws = low.basis_words(deg)
            bits = to_bool(vec[None, :], len(gens))[0]
            hit = self._terms[key] = (ws[bits], gens[bits], deg - low.gen_degrees[gens[bits]])
        return hit


class Composites:
    """The composites of every generator, computed a bidegree at a time in three compiled calls (the Z/4 parts,
    the Y-parts, the per-generator sums) and kept; `twin` is the product-at-a-time version the tests compare."""

    def __init__(self, res: Resolution, pair: PairAlgebra) -> None:
        self.res, self.pair = res, pair
        self._lock = threading.Lock()
        self._done: dict[tuple[int, int], dict[int, Composite]] = {}

    def __call__(self, s: int, g: int) -> Composite:
        t = int(self.res.free(s).gen_degrees[g])
        with self._lock:
            hit = self._done.get((s, t))
        if hit is None:
            hit = self._bidegree(s, t)
            with self._lock:
                hit = self._done.setdefault((s, t), hit)
        return hit[g]

    def _bidegree(self, s: int, t: int) -> dict[int, Composite]:
        res, basis = self.res, self.res.algebra
        fs, mid, low = res.free(s), res.free(s - 1), res.free(s - 2)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        width_mid = mid.dimension(t)
        support = np.zeros((last - first, width_mid), dtype=bool)
        for row, g in enumerate(range(first, last)):
            vec, ngens = res.differential(s).output(g)
            support[row, :mid.dimension(t, ngens)] = to_bool(vec[None, :], mid.dimension(t, ngens))[0]
        used = np.nonzero(support.any(axis=0))[0]
        batch = compact(res.differential(s - 1).batch(t, used))
        width_low = low.dimension(t)
        z4 = np.zeros((len(used), width_low), dtype=np.int8)
        if len(used):
            z4_batch(z4, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
                     batch.term_col, basis.rank_g, basis.index_map, basis.index_map_offset, binomials_mod4())
        incidence = support[:, used].astype(np.int64)
        totals = (incidence @ z4.astype(np.int64)) % 4
        if (totals % 2).any():
            g = first + int(np.nonzero((totals % 2).any(axis=1))[0][0])
            raise SecondaryError(f"the lifted composite d d on {fs.gen_names[g]} is not in the kernel")
        twos = from_bool((totals // 2 % 2).astype(bool)) if totals.size else np.zeros((last - first, 0), np.uint64)
        keys, segments, ys = self._y_parts(t, low, batch, incidence, len(used))
        out = {}
        for row, g in enumerate(range(first, last)):
            parts = {}
            for key, (start, width) in zip(keys, segments, strict=True):
                bits = to_bool(ys[row:row + 1], start + width)[0, start:start + width]
                if bits.any():
                    parts[key] = from_bool(bits[None, :])[0]
            out[g] = Composite(twos[row] if twos.size else np.zeros(0, dtype=np.uint64), parts)
        return out

    def _y_parts(self, t: int, low, batch: ProductBatch, incidence: np.ndarray, nrows: int):
        """The Y-parts of all rows (one packed matrix, one column segment per key), summed per generator."""
        basis = self.res.algebra
        keys = [(k, l) for l in range(MAX_LEN + 2) for k in range(l) if (1 << k) + (1 << l) <= t + 1]
        key_of = np.full((2 * MAX_LEN + 2, 2 * MAX_LEN + 2), 0, dtype=np.int64)
        segments, key_col, start = [], np.full((len(batch.term_s), max(len(keys), 1)), -1, dtype=np.int64), 0
        gen_of_term = batch.term_gen
        for n, (k, l) in enumerate(keys):
            key_of[k, l] = n
            d_key = t + 1 - (1 << k) - (1 << l)
            off = low.offsets(d_key)
            width = int(off[-1])
            key_col[:, n] = start + off[gen_of_term]
            segments.append((start, width))
            start += width
        ys = np.zeros((nrows, words(start)), dtype=np.uint64)
        if nrows and keys:
            y_batch(ys, batch.row_r, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s, batch.term_sdeg,
                    key_col, key_of, basis.rank_g, basis.index_map, basis.index_map_offset, np.zeros(SCRATCH, np.int64))
        summed = gf2_matmul(from_bool(incidence.astype(bool)), ys, nrows, start) if nrows else \
            np.zeros((incidence.shape[0], words(start)), dtype=np.uint64)
        return keys, segments, summed

    def twin(self, s: int, g: int) -> dict[int, Element]:
        """C_s(g) by sigma products one at a time: {F_{s-2} generator: kernel element}."""
        res, pair = self.res, self.pair
        d_s, d_prev = res.differential(s), res.differential(s - 1)
        low_degrees = res.free(s - 2).gen_degrees
        t = int(res.free(s).gen_degrees[g])
        out: dict[int, Element] = {}
        for k in range(int(d_s.term_start[g]), int(d_s.term_start[g + 1])):
            a = res.algebra.unpack(int(d_s.term_s[k]))
            mid = int(d_s.term_gen[k])
            for q in range(int(d_prev.term_start[mid]), int(d_prev.term_start[mid + 1])):
                low = int(d_prev.term_gen[q])
                if low not in out:
                    out[low] = pair.zero(t - int(low_degrees[low]))
                out[low].add(pair.sigma_product(a, res.algebra.unpack(int(d_prev.term_s[q]))))
        return out


def compact(batch: ProductBatch) -> ProductBatch:
    """The batch with only the term lists its rows use, renumbered (so per-term tables stay small); term_gen
    names each kept term's target generator, term_col its column."""
    lists = np.unique(batch.row_terms)
    starts, ends = batch.term_start[lists], batch.term_start[lists + 1]
    take = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)]) if len(lists) else \
        np.zeros(0, dtype=np.int64)
    new_start = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64)
    remap = np.searchsorted(lists, batch.row_terms)
    out = ProductBatch(row_r=batch.row_r, row_deg=batch.row_deg, row_terms=remap.astype(np.int64),
                       term_start=new_start, term_s=batch.term_s[take], term_sdeg=batch.term_sdeg[take],
                       term_col=batch.term_col[take])
    out.term_gen = batch.term_gen[take]
    return out


class SecondaryHomotopy(ChainMap):
    """h: F_s -> F_{s-2} of degree -1 (shift (2, 1)), zero at s = 2, lifted from (*) by the chain-map engine."""

    def __init__(self, res: Resolution, region: Region) -> None:
        def zero(t: int) -> np.ndarray:
            return np.zeros((res.new_gens.get((2, t), 0), res.module.dimension(t - 1)), dtype=np.uint8)

        super().__init__(res, res, (2, 1), zero, region, name="the secondary homotopy")
        self.pair = PairAlgebra(res.algebra)
        self.composites = Composites(res, self.pair)
        self._checks: dict[tuple[int, int], np.ndarray] = {}
        self._ay_words: dict[tuple[int, int, int], tuple[np.ndarray, int]] = {}

    def intermediate(self, s: int, t: int, width_gens: int) -> np.ndarray:
        """The A-terms of (*) for the generators of F_s in degree t, packed over F_{s-3}(t - 1) (first width_gens
        generators): every product L V, where L is Sq(R - e_1) or a term of A(Sq R, Y_{k,l}) and V the matching part
        of C_{s-1}(g'), for the terms Sq(R) g' of d_s g. Each distinct term Sq(R) g' is expanded once, all products
        are one batch, and the generators' sums are one product with the incidence of terms."""
        res = self.source
        fs, mid, low = res.free(s), res.free(s - 1), res.free(s - 3)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        out_off = low.offsets(t - 1, width_gens)
        width = int(out_off[-1])
        d = res.differential(s)
        spans = [(int(d.term_start[g]), int(d.term_start[g + 1])) for g in range(first, last)]
        idx = np.concatenate([np.arange(a, b) for a, b in spans]) if spans else np.zeros(0, dtype=np.int64)
        if len(idx) == 0:
            return np.zeros((last - first, words(width)), dtype=np.uint64)
        owners = np.repeat(np.arange(last - first), [b - a for a, b in spans])
        key = np.column_stack([d.term_s[idx].view(np.int64), d.term_gen[idx]])
        pairs, first_at, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        self._fill_a_y(pairs, d.term_sdeg[idx[first_at]], s)
        plan = _Plan(low, out_off)
        for p, (word, gp) in enumerate(pairs):
            comp = self.composites(s - 1, int(gp))
            deg_r = int(d.term_sdeg[idx[first_at[p]]])
            deg_v = int(mid.gen_degrees[gp])
            if word & R1_MASK and comp.twos.any():  # r_1 >= 1: Sq(R - e_1) is one less in the lowest field
                plan.rows(p, np.array([np.uint64(word) - np.uint64(1)]), deg_r - 1, comp.part(None, low, deg_v))
            for k, l in comp.ys:
                lefts, ay_deg = self._a_y(int(word), deg_r, k, l)
                if len(lefts):
                    plan.rows(p, lefts, ay_deg, comp.part((k, l), low, deg_v + 1 - (1 << k) - (1 << l)))
        incidence = np.zeros((last - first, len(pairs)), dtype=bool)
        incidence[owners, inverse.ravel()] = True
        return plan.run(res.algebra, incidence, width)

    def _fill_a_y(self, pairs: np.ndarray, degrees: np.ndarray, s: int) -> None:
        """Compute every A(Sq R, Y_{k,l}) these terms need and the memo lacks, in one compiled call."""
        need = {}
        for (word, gp), deg in zip(pairs, degrees, strict=True):
            for k, l in self.composites(s - 1, int(gp)).ys:
                key = (int(word), k, l)
                if key not in self._ay_words:
                    need[key] = int(deg)
        if not need:
            return
        basis = self.source.algebra
        keys = list(need)
        top = max(need[key] + (1 << key[1]) + (1 << key[2]) - 2 for key in keys)
        basis.extend(top)
        out = np.zeros((len(keys), words(max(basis.dimension(e) for e in range(top + 1)))), dtype=np.uint64)
        a_y_batch(out, np.array([w for w, _, _ in keys], dtype=np.uint64), np.array([need[key] for key in keys]),
                  np.array([k for _, k, _ in keys]), np.array([l for _, _, l in keys]), basis.rank_g, basis.index_map,
                  basis.index_map_offset, np.zeros(SCRATCH, dtype=np.int64))
        for n, key in enumerate(keys):
            deg = need[key] + (1 << key[1]) + (1 << key[2]) - 2
            bits = to_bool(out[n:n + 1], basis.dimension(deg))[0]
            self._ay_words[key] = (basis.words(deg)[bits], deg)

    def _a_y(self, word: int, deg_r: int, k: int, l: int) -> tuple[np.ndarray, int]:
        """The Milnor basis words of A(Sq R, Y_{k,l}) and their degree (from the memo _fill_a_y keeps)."""
        return self._ay_words[(int(word), k, l)]

    def cycles(self, s: int, t: int, preimages: Preimages) -> np.ndarray:
        base = super().cycles(s, t, preimages)
        if s == self.s_shift:
            return base
        gens = preimages.target_ngens(s - 2, t - 1)
        extra = self.intermediate(s, t, gens)
        out = base.copy()
        out[:, :extra.shape[1]] ^= extra
        if s == self.s_shift + 1:
            self._checks[(s, t)] = out.copy()
        return out

    def record(self, s: int, t: int, images: np.ndarray, ngens: int) -> None:
        wanted = self._checks.pop((s, t), None)
        if wanted is not None and len(images):
            got = self.source.differential(1).apply(t - 1, images, self.source.free(0).gens_below(t - 1))
            width = min(got.shape[1], wanted.shape[1])
            if (got[:, :width] != wanted[:, :width]).any() or got[:, width:].any() or wanted[:, width:].any():
                raise SecondaryError(f"failed to lift at (n={t - s}, s={s}): the module's A-terms leave "
                                     "the kernel of the augmentation (the secondary algebra does not act here)")
        super().record(s, t, images, ngens)


class _Plan:
    """The rows L x V of one intermediate: each V's terms become a term list, each row belongs to one distinct
    term Sq(R) g' (a "pair"), and one compiled call makes every product."""

    def __init__(self, low, out_off: np.ndarray) -> None:
        self.low, self.out_off = low, out_off
        self.lists: dict[int, int] = {}
        self.term_s: list[np.ndarray] = []
        self.term_sdeg: list[np.ndarray] = []
        self.term_col: list[np.ndarray] = []
        self.starts = [0]
        self.row_pair: list[int] = []
        self.row_r: list[np.ndarray] = []
        self.row_deg: list[int] = []
        self.row_list: list[int] = []

    def _list(self, terms: tuple[np.ndarray, np.ndarray, np.ndarray]) -> int:
        found = self.lists.get(id(terms))
        if found is not None:
            return found
        ws, gens, sdeg = terms
        if len(gens) and gens.max() >= len(self.out_off) - 1:
            raise AssertionError("an A-term reaches a generator of degree >= t - 1")
        self.term_s.append(ws)
        self.term_sdeg.append(sdeg)
        self.term_col.append(self.out_off[gens])
        self.starts.append(self.starts[-1] + len(ws))
        self.lists[id(terms)] = len(self.starts) - 2
        return self.lists[id(terms)]

    def rows(self, pair: int, lefts: np.ndarray, deg: int, terms: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        n = len(lefts)
        lst = self._list(terms)
        self.row_pair.extend([pair] * n)
        self.row_r.append(lefts)
        self.row_deg.extend([deg] * n)
        self.row_list.extend([lst] * n)

    def run(self, basis, incidence: np.ndarray, width: int) -> np.ndarray:
        """For each generator g: the sum over pairs p with incidence[g, p] of that pair's products, packed."""
        owners, npairs = incidence.shape
        if not self.row_r:
            return np.zeros((owners, words(width)), dtype=np.uint64)
        batch = ProductBatch(row_r=np.concatenate(self.row_r).astype(np.uint64),
                             row_deg=np.array(self.row_deg, dtype=np.int64),
                             row_terms=np.array(self.row_list, dtype=np.int64),
                             term_start=np.array(self.starts, dtype=np.int64),
                             term_s=np.concatenate(self.term_s).astype(np.uint64),
                             term_sdeg=np.concatenate(self.term_sdeg).astype(np.int64),
                             term_col=np.concatenate(self.term_col).astype(np.int64))
        products = np.zeros((len(batch.row_r), words(width)), dtype=np.uint64)
        run_batch(products, batch, basis)
        per_pair = np.zeros((npairs, words(width)), dtype=np.uint64)
        np.bitwise_xor.at(per_pair, np.array(self.row_pair, dtype=np.int64), products)
        return gf2_matmul(from_bool(incidence), per_pair, npairs, width)


def _trim(r: tuple[int, ...]) -> tuple[int, ...]:
    r = list(r)
    while r and r[-1] == 0:
        r.pop()
    return tuple(r)


def check_secondary(module: Module) -> None:
    """The secondary lift exists over the whole algebra at p = 2 only."""
    if module.algebra.prime != 2:
        raise SecondaryError(f"{module.name} is a module at p = {module.algebra.prime}: the secondary Steenrod "
                             "algebra is implemented at p = 2 only")
    if not module.profile.is_full:
        raise SecondaryError(f"{module.name} lives over {module.profile.describe()}: the secondary Steenrod "
                             "algebra is implemented over the whole algebra only")


def secondary_homotopy(res: Resolution, region: Region, preimages: Preimages | None = None,
                       threads: int = 1) -> SecondaryHomotopy:
    """h lifted over the rows s = 2..max_s of the region (the resolution must be computed there)."""
    check_secondary(res.module)
    h = SecondaryHomotopy(res, region)
    lift([h], {id(res): preimages or Preimages(res)}, threads)
    return h


def d2_matrix(h: SecondaryHomotopy, n: int, s: int) -> np.ndarray:
    """d2 on Ext at (n, s): uint8 (dim there) x (dim at (n - 1, s + 2)); both must be lifted."""
    t = n + s
    if not h.is_lifted(s + 2, t + 1):
        raise LiftError(f"d2 from (n={n}, s={s}) needs (n={n - 1}, s={s + 2}), which is not computed")
    return h.hom_k(s + 2, t + 1)  # (generators of F_s in degree t) x (generators of F_{s+2} in degree t + 1)


def d2_entries(h: SecondaryHomotopy, region: Region) -> list[tuple[tuple[int, int, int], list[int]]]:
    """((n, s, j), d2 x_(n,s,j) over the target's basis) for every generator of a nonzero source whose target
    (n - 1, s + 2) is nonzero and in the region, stem by stem, then by s (the reference's order)."""
    res = h.source
    out = []
    for n in range(res.min_degree, region.chart_max_stem + 1):
        for s in range(1, region.max_s - 1):
            t = n + s
            if t <= 0 or not region.contains(s, t) or not region.contains(s + 2, t + 1):
                continue
            if not res.new_gens.get((s, t)) or not res.new_gens.get((s + 2, t + 1)):
                continue
            for j, row in enumerate(d2_matrix(h, n, s)):
                out.append(((n, s, j), [int(v) for v in row]))
    return out


def d2_lines(h: SecondaryHomotopy, region: Region) -> str:
    """The reference's `secondary` output: `d_2 x_(n, s, j) = [v]`, zero lines included."""
    return "".join(f"d_2 x_({n}, {s}, {j}) = [{', '.join(map(str, row))}]\n"
                   for (n, s, j), row in d2_entries(h, region))


def differentials(h: SecondaryHomotopy, region: Region) -> list[Differential]:
    """The nonzero entries of d2 over the region, as the chart model holds them."""
    return [Differential((n, s, j), (n - 1, s + 2, k)) for (n, s, j), row in d2_entries(h, region)
            for k, v in enumerate(row) if v]
