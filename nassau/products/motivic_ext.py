"""Ext over A^C as an F_2[tau]-module: generators (stem, s, weight), tau-torsion orders, h_i products.

The minimal resolution (nassau.engine.motivic) gives, in each internal degree t, the cochain complex C^s =
Hom_{A^C}(F_s, M_2): free over F_2[tau] on the duals g* of the generators of degree t, g* in weight w(g), with
delta(h*) = sum tau^{w(g) - w(h)} g* over the generators g of F_s whose d(g) has the term tau^k h (always k >= 1:
the resolution is minimal). Multiplication by tau lowers the weight, so reading weights downwards C is a filtered
complex, and its homology is a persistence module: the standard column reduction (cells by decreasing weight,
each column reduced by earlier ones) pairs a class born at weight b with the cell that kills it at weight d < b,
an F_2[tau]/tau^{b-d} summand; an unpaired class is tau-free (Edelsbrunner-Letscher-Zomorodian; Zomorodian-Carlsson,
"Computing persistent homology", 2005). With coefficients in M_2/tau (C(tau)) delta vanishes: one class per
generator.

h_i x for a cocycle x at (s, t): (h_i x)(g') = sum_k [coefficient of Sq^(2^i) k in d(g')] x(k), as over A (each
entry a power of tau fixed by the weights), then written in the generators above.

A trigrading (stem, s, weight) may hold several generators (S_2 at (35, 5, 20): h2 d1, tau-free, and h1^4 h5,
killed by tau), so each has an index there, 0, 1, ...: the tau-free ones first, then by increasing torsion order,
ties in the order of the resolution's generators that carry them (the order the resolution made them). Only the
ties depend on the resolution: how many generators of each torsion order a trigrading has is Ext's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from algebra.milnor.motivic_weight import weight
from nassau.engine.motivic import MotivicResolution


def h_weight(i: int) -> int:
    """The weight of h_i (of Sq^(2^i))."""
    return weight((1 << i,))


@dataclass(frozen=True)
class MotivicClass:
    """A generator of Ext over F_2[tau]: (stem, s, weight), its index there and its tau-torsion order (None:
    tau-free)."""

    stem: int
    s: int
    weight: int
    torsion: int | None
    #: Its index among the cells (generators) of internal degree t, in the complex's order.
    cell: int
    #: Its index among the generators of its (stem, s, weight) (the module docstring gives the order).
    index: int

    @property
    def t(self) -> int:
        return self.stem + self.s


class DegreeComplex:
    """C^* in one internal degree t, reduced: cells by decreasing weight, their pairs and cycle representatives."""

    def __init__(self, res: MotivicResolution, t: int, max_s: int, quotient: bool) -> None:
        self.t = t
        cells = []  # (s, generator)
        for s in range(max_s + 1):
            fs = res.free(s)
            cells.extend((s, g) for g in range(fs.gens_below(t), fs.gens_below(t + 1)))
        w = np.array([res.weights[s][g] for s, g in cells], dtype=np.int64)
        order = np.argsort(-w, kind="stable")
        self.cells = [cells[k] for k in order]
        self.weights = w[order]
        self.s = np.array([c[0] for c in self.cells], dtype=np.int64)
        self.index = {c: k for k, c in enumerate(self.cells)}
        n = len(self.cells)
        delta = np.zeros((n, n), dtype=np.uint8)  # column j: delta(cell j)
        for i, (s, g) in enumerate(self.cells):
            if s == 0:
                continue
            vec, ngens = res.differential(s).output(g)
            target = res.free(s - 1)
            off = target.offsets(t, ngens)
            bits = res.field.to_ints(np.asarray(vec).reshape(1, -1), int(off[-1]))[0]
            for h in range(target.gens_below(t), ngens):
                if bits[off[h]]:
                    j = self.index[(s - 1, h)]
                    assert self.weights[i] > self.weights[j], "a minimal resolution has delta in tau C"
                    delta[i, j] = 1
        self.delta = delta
        self.quotient = quotient
        self._reduce()

    def _reduce(self) -> None:
        n = len(self.cells)
        if self.quotient:  # delta = 0 mod tau: every cell is a class, tau kills it
            self.killer = {i: None for i in range(n)}
            self.rep = np.eye(n, dtype=np.uint8)
            return
        r = self.delta.copy()
        v = np.eye(n, dtype=np.uint8)
        low_of: dict[int, int] = {}
        #: positive cell i -> the cell j that kills it (None: never)
        self.killer: dict[int, int | None] = {}
        self.rep = np.zeros((n, n), dtype=np.uint8)  # row i: the cycle representing the class born at i
        for j in range(n):
            while True:
                nz = np.nonzero(r[:, j])[0]
                if len(nz) == 0 or int(nz[-1]) not in low_of:
                    break
                k = low_of[int(nz[-1])]
                r[:, j] ^= r[:, k]
                v[:, j] ^= v[:, k]
            if len(nz):
                low_of[int(nz[-1])] = j
        for i in range(n):
            if not r[:, i].any():
                j = low_of.get(i)
                self.killer[i] = j
                self.rep[i] = v[:, i] if j is None else r[:, j]

    def classes(self, s: int) -> list[MotivicClass]:
        """The generators of row s, each with its index in its weight: tau-free first, then by torsion order."""
        found = []
        for i in sorted(self.killer):
            if self.s[i] != s:
                continue
            j = self.killer[i]
            torsion = 1 if self.quotient else (None if j is None else int(self.weights[i] - self.weights[j]))
            found.append((int(self.weights[i]), -1 if torsion is None else torsion, i, torsion))
        out, seen = [], {}
        for w, _, i, torsion in sorted(found):
            seen[w] = seen.get(w, -1) + 1
            out.append(MotivicClass(self.t - s, s, w, torsion, i, seen[w]))
        return out

    def express(self, z: np.ndarray, u: int) -> list[tuple[int, int]]:
        """A cocycle z (0/1 over the cells, in weight u: only cells of weight >= u) as sum tau^k (class born at i):
        the (i, k) with nonzero coefficient. Boundaries drop out."""
        z = z.copy()
        out = []
        if self.quotient:  # delta = 0 mod tau, and tau z = 0: only the cells of weight exactly u count
            return [(int(i), 0) for i in np.nonzero(z)[0] if self.weights[i] == u]
        while z.any():
            i = int(np.nonzero(z)[0][-1])
            assert i in self.killer and self.weights[i] >= u, "not a cocycle in this weight"
            z ^= self.rep[i]
            j = self.killer[i]
            if j is None or self.weights[j] < u:
                out.append((i, int(self.weights[i] - u)))
        return out


class MotivicExt:
    """Ext_{A^C}(M, M_2) (or with M_2/tau coefficients) over the region a resolution covers, degree by degree."""

    def __init__(self, res: MotivicResolution, max_s: int, max_t: int) -> None:
        self.res, self.max_s, self.max_t = res, max_s, max_t
        self.quotient = res.motivic.tau_quotient
        self._degrees: dict[int, DegreeComplex] = {}

    def degree(self, t: int) -> DegreeComplex:
        if t not in self._degrees:
            self._degrees[t] = DegreeComplex(self.res, t, self.max_s, self.quotient)
        return self._degrees[t]

    @cached_property
    def classes(self) -> list[MotivicClass]:
        """Every generator, by stem, then s, then decreasing weight, then index."""
        out = [c for t in range(self.res.min_degree, self.max_t + 1) for s in range(self.max_s + 1)
               if self.res.is_done(s, t) for c in self.degree(t).classes(s)]
        return sorted(out, key=lambda c: (c.stem, c.s, -c.weight, c.index))

    def tau_free_dims(self) -> dict[tuple[int, int], int]:
        """(s, t) -> the number of tau-free summands: dim Ext_A^{s,t} once tau is inverted."""
        out: dict[tuple[int, int], int] = {}
        for c in self.classes:
            if c.torsion is None:
                out[(c.s, c.t)] = out.get((c.s, c.t), 0) + 1
        return {b: out.get(b, 0) for b in self.res.dims()}

    def find(self, stem: int, s: int, weight: int) -> list[MotivicClass]:
        """The generators of (stem, s, weight), by index."""
        return [c for c in self.classes if (c.stem, c.s, c.weight) == (stem, s, weight)]

    def h_product(self, i: int, x: MotivicClass) -> list[tuple[MotivicClass, int]] | None:
        """h_i x as sum tau^k y over generators y, by decreasing weight and index (None if its bidegree is outside
        the resolution)."""
        step = 1 << i
        t2, s2 = x.t + step, x.s + 1
        if s2 > self.max_s or t2 > self.max_t or not self.res.is_done(s2, t2):
            return None
        here, there = self.degree(x.t), self.degree(t2)
        u = x.weight + h_weight(i)
        rep = here.rep[x.cell]
        res = self.res
        fs = res.free(x.s)
        column = res.algebra.index((step,))
        z = np.zeros(len(there.cells), dtype=np.uint8)
        for k in np.nonzero(rep)[0]:
            s, g = here.cells[k]
            if s != x.s:
                continue
            for jj, (s3, g3) in enumerate(there.cells):
                if s3 != s2:
                    continue
                vec, ngens = res.differential(s2).output(g3)
                if g >= ngens:
                    continue
                off = fs.offsets(t2, ngens)
                pos = int(off[g]) + column
                if (int(vec[pos // 64]) >> (pos % 64)) & 1:
                    z[jj] ^= 1
        assert all(there.weights[j] >= u for j in np.nonzero(z)[0]), "h_i x has a term of too low weight"
        by_cell = {c.cell: c for c in there.classes(s2)}
        terms = [(by_cell[i2], k) for i2, k in there.express(z, u)]
        return sorted(terms, key=lambda term: (-term[0].weight, term[0].index))
