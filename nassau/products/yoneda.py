"""Yoneda representatives: a finite complex of finite modules whose class is a given x in Ext^{s,t}(M)
(REFERENCE-PRODUCTS 4).

Y_s is F_s truncated above a degree T(s) and divided by relations, one RREF subspace per degree (vectors in F_s's full
basis of that degree; the surviving basis is the non-pivot columns). From the top filtration down, the source Y_s is
made as small as it can be without changing homology: first whole generators are killed where the image of d_{s+1}
(D) survives it, then, degree by degree from the top, the part of the A^+-annihilated, phi-killed kernel K that
neither meets D nor is needed for it is divided out, together with its image under d_s in Y_{s-1}. Every choice
follows the reference's order (generators by degree and index, pivot columns by a score of their Milnor element),
so the dimensions are the reference's for the same resolution.
"""
from __future__ import annotations

import numpy as np

from algebra.free.left_action import left_multiplication
from fp import Augmented, Subspace, from_bool, scatter_columns, to_bool, words
from nassau.engine.resolution import Resolution
from nassau.products.ext_class import ExtClass


class Yoneda:
    def __init__(self, res: Resolution, x: ExtClass) -> None:
        self.res, self.x = res, x
        self.top = x.s
        module = res.module
        lo = module.min_degree

        def a(s: int) -> int:
            v = lo
            if s == 0:
                v = max(v, module.max_degree)
            if s == x.s:
                v = max(v, x.t)
            return v

        self.truncation = {x.s: a(x.s)}
        for s in range(x.s - 1, -1, -1):
            self.truncation[s] = max(a(s), a(s + 1), self.truncation[s + 1] - 1)
        #: (s, t) -> relations of Y_s in degree t, over F_s(t) (every generator of degree <= t).
        self.relations: dict[tuple[int, int], Subspace] = {}
        for s in range(x.s + 1):
            for t in range(self.bottom(s), self.truncation[s] + 1):
                self.relations[(s, t)] = Subspace(self.width(s, t))
        for s in range(x.s, 0, -1):
            self._quotient(s)

    # -- the free modules --------------------------------------------------------------------------------------
    def bottom(self, s: int) -> int:
        return self.res.min_degree + s

    def ngens(self, s: int, t: int) -> int:
        return self.res.free(s).gens_below(t + 1)

    def width(self, s: int, t: int) -> int:
        return self.res.free(s).dimension(t, self.ngens(s, t))

    def surviving(self, s: int, t: int) -> np.ndarray:
        """The basis of Y_s(t): the columns no relation has as pivot."""
        if t > self.truncation[s] or t < self.bottom(s):
            return np.zeros(0, dtype=np.int64)
        mask = np.ones(self.width(s, t), dtype=bool)
        mask[self.relations[(s, t)].pivots] = False
        return np.nonzero(mask)[0]

    def dimension(self, s: int) -> int:
        """Total dimension of Y_s over all degrees."""
        return sum(len(self.surviving(s, t)) for t in range(self.bottom(s), self.truncation[s] + 1))

    def differential(self, s: int, t: int, rows: np.ndarray) -> np.ndarray:
        """d_s of the given basis elements of F_s(t), packed over F_{s-1}(t) (every generator of degree <= t)."""
        return self.res.differential(s).matrix(t, rows.astype(np.int64), self.ngens(s - 1, t))

    def _relate_target(self, s: int, t: int, rows: np.ndarray) -> None:
        """Divide Y_{s-1} by d_s of the given packed elements of F_s(t) (nothing above Y_{s-1}'s truncation)."""
        if t > self.truncation[s - 1] or not len(rows):
            return
        images = _apply(self.res.differential(s), t, rows, self.ngens(s - 1, t), self.width(s - 1, t))
        if images.any():
            self.relations[(s - 1, t)].add_rows(images)

    # -- one filtration ------------------------------------------------------------------------------------------
    def _quotient(self, s: int) -> None:
        top = self.truncation[s]
        image: dict[int, Subspace] = {}
        if s < self.top:
            for t in range(self.bottom(s), top + 1):
                image[t] = self._surviving_image(s, t)
            self._kill_generators(s, image)
        for t in range(top, self.bottom(s) - 1, -1):
            self._divide_kernel(s, t, image.get(t))

    def _surviving_image(self, s: int, t: int) -> Subspace:
        """D(t): d_{s+1} of Y_{s+1}(t)'s basis, reduced modulo Y_s's relations, as an RREF subspace."""
        space = Subspace(self.width(s, t))
        basis = self.surviving(s + 1, t)
        if len(basis):
            rows = self.relations[(s, t)].reduce(self.differential(s + 1, t, basis))
            space.add_rows(rows)
        return space

    def _kill_generators(self, s: int, image: dict[int, Subspace]) -> None:
        """Phase 1: divide out each whole generator whose blocks leave every D(t) independent."""
        fs, top = self.res.free(s), self.truncation[s]
        for g in range(fs.gens_below(top + 1)):
            start = int(fs.gen_degrees[g])
            trial = {}
            for t in range(start, top + 1):
                if image[t].dim == 0:
                    continue
                rel = _copy(self.relations[(s, t)])
                rel.add_rows(self._block(s, t, g))
                reduced = rel.reduce(image[t].basis.copy())
                if _rank(reduced, self.width(s, t)) < image[t].dim:
                    break
                trial[t] = (rel, reduced)
            else:
                for t in range(start, top + 1):
                    block = self._block(s, t, g)
                    if t in trial:
                        self.relations[(s, t)], reduced = trial[t]
                        image[t] = Subspace(self.width(s, t))
                        image[t].add_rows(reduced)
                    else:
                        self.relations[(s, t)].add_rows(block)
                    self._relate_target(s, t, block)

    def _block(self, s: int, t: int, g: int) -> np.ndarray:
        """The unit vectors of generator g's block in F_s(t)."""
        off = self.res.free(s).offsets(t, self.ngens(s, t))
        cols = np.arange(off[g], off[g + 1])
        out = np.zeros((len(cols), words(self.width(s, t))), dtype=np.uint64)
        out[np.arange(len(cols)), cols >> 6] = np.uint64(1) << (cols & 63).astype(np.uint64)
        return out

    def _divide_kernel(self, s: int, t: int, image: Subspace | None) -> None:
        """Phase 2 at degree t: divide out the part of K (killed by A^+ and phi) that C does not keep for D."""
        basis = self.surviving(s, t)
        if not len(basis):
            return
        width = self.width(s, t)
        unit = np.zeros((len(basis), words(width)), dtype=np.uint64)
        unit[np.arange(len(basis)), basis >> 6] = np.uint64(1) << (basis & 63).astype(np.uint64)
        maps = [self._act(s, t, basis, theta) for e in range(1, self.truncation[s] - t + 1)
                for theta in self.res.algebra.profile.generators(e)]
        if s == self.top and t == self.x.t:
            maps.append(self._phi(basis))
        map_part = np.concatenate([to_bool(m, m.shape[1] * 64) for m in maps], axis=1) if maps else \
            np.zeros((len(basis), 0), dtype=bool)
        modulo = image.reduce(unit.copy()) if image is not None else unit.copy()
        aug = Augmented(len(basis), [map_part.shape[1], width, len(basis)])
        aug.set_segment(0, from_bool(map_part) if map_part.shape[1] else np.zeros((len(basis), 0), dtype=np.uint64))
        aug.set_segment(1, modulo)
        aug.fill_identity(2)
        pivots = aug.row_reduce()
        c1 = aug.segment_columns(1)[0]
        r0 = int(np.searchsorted(pivots, c1))
        c2 = aug.segment_columns(2)[0]
        r_j = int(np.searchsorted(pivots, c2))
        coefficients = aug.segment(2)
        kernel = Subspace(width)
        kernel.add_rows(_combine(coefficients[r0:len(pivots)], basis, width))
        meets = _combine(coefficients[r_j:len(pivots)], basis, width)
        if kernel.dim == 0:
            return
        rel = self.relations[(s, t)]
        counts = to_bool(rel.basis, width).sum(axis=0) if rel.dim else np.zeros(width, dtype=np.int64)
        words_k = self.res.free(s).basis_words(t, self.ngens(s, t))[1][kernel.pivots]
        scores = [_rate(int(w)) + 10000 * int(counts[c]) for w, c in zip(words_k, kernel.pivots)]
        order = [int(c) for _, c in sorted(zip(scores, kernel.pivots.tolist()))]
        kept = _greedy_pivots(to_bool(meets, width), order)
        drop = np.array([c not in kept for c in kernel.pivots.tolist()], dtype=bool)
        if drop.any():
            rows = kernel.basis[drop]
            rel.add_rows(rows)
            self._relate_target(s, t, rows)

    def _act(self, s: int, t: int, basis: np.ndarray, theta: tuple[int, ...]) -> np.ndarray:
        """theta on the basis elements of Y_s(t), reduced in Y_s (zero above its truncation)."""
        from algebra.milnor.ppart import degree

        e = degree(theta)
        if t + e > self.truncation[s]:
            return np.zeros((len(basis), 0), dtype=np.uint64)
        fs = self.res.free(s)
        ngens = self.ngens(s, t)
        prod = left_multiplication(fs, theta, t, ngens, basis.astype(np.int64))
        full = np.zeros((len(basis), words(self.width(s, t + e))), dtype=np.uint64)
        full[:, :prod.shape[1]] = prod  # the generators of degree in (t, t + e] add columns after these
        return self.relations[(s, t + e)].reduce(full)

    def _phi(self, basis: np.ndarray) -> np.ndarray:
        """phi on the basis elements of F_{s_x}(t_x): the coordinate of the class on 1 x_i."""
        fs, x = self.res.free(self.top), self.x
        off = fs.offsets(x.t, self.ngens(self.top, x.t))
        first = fs.gens_below(x.t)
        ones = {int(off[first + i]): v for i, v in enumerate(x.vector)}
        return from_bool(np.array([[bool(ones.get(int(c), 0))] for c in basis]).reshape(len(basis), 1))


def _copy(space: Subspace) -> Subspace:
    return Subspace.from_rref(space.basis.copy(), space.pivots.copy(), space.ncols)


def _rank(rows: np.ndarray, ncols: int) -> int:
    from fp import row_reduce

    return len(row_reduce(rows.copy(), ncols))


def _apply(d, t: int, rows: np.ndarray, ngens: int, width: int) -> np.ndarray:
    out = d.apply(t, rows, ngens)
    if out.shape[1] < words(width):
        out = np.concatenate([out, np.zeros((len(out), words(width) - out.shape[1]), dtype=np.uint64)], axis=1)
    return out


def _combine(coefficients: np.ndarray, basis: np.ndarray, width: int) -> np.ndarray:
    """Rows of coefficients over the surviving basis as vectors of F_s(t)."""
    return scatter_columns(np.ascontiguousarray(coefficients), basis, width)


def _rate(word: int) -> int:
    """sum over k of popcount(r_k) 2^(k-1): the reference's cost of a Milnor basis element."""
    from algebra.milnor.ppart import unpack

    return sum(r.bit_count() << k for k, r in enumerate(unpack(word)))


def _greedy_pivots(rows: np.ndarray, order: list[int]) -> set[int]:
    """Forward echelon over the rows visiting only the given columns in order; the columns that get a pivot."""
    rows = rows.copy()
    used = np.zeros(len(rows), dtype=bool)
    kept = set()
    for c in order:
        hit = np.nonzero(~used & rows[:, c])[0]
        if not len(hit):
            continue
        r = hit[0]
        used[r] = True
        kept.add(c)
        others = hit[1:]
        rows[others] ^= rows[r]
    return kept


def yoneda_lines(y: Yoneda) -> list[str]:
    """The reference's yoneda output: `Dimension of {s}th module is {D}` for s = 0..s_x."""
    return [f"Dimension of {s}th module is {y.dimension(s)}" for s in range(y.top + 1)]
