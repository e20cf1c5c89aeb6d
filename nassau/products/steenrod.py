"""Steenrod operations Sq^j on Ext(S) through the tensor square of a Yoneda representative (REFERENCE-PRODUCTS 5.1).

For x in Ext^{s,t}, Y is its Yoneda representative and C = Y (x) Y, C_m = sum of Y_j (x) Y_{m-j}, with A acting
through the coproduct (P(R) acts as the sum of P(R') (x) P(R'') over R' + R'' = R) and d(a (x) b) = da (x) b +
a (x) db. C is exact with H_0 = F2, so F lifts into it: Delta_0 lifts the diagonal (iota -> 1 (x) 1) and Delta_i
(F_m -> C_{m+i}) is a preimage of Delta_{i-1} + tau Delta_{i-1} + Delta_i d, tau the swap of the factors. On
F_{2s-i} Delta_i lands in C_{2s}(2t) = Y_s (x) Y_s, one-dimensional: its coefficient on each generator is
Sq^{s-i} x in Ext^{2s-i, 2t}. Everything is small (Y is finite), so C is held as dense matrices built from the
action of Milnor elements on Y (one product batch each) by Kronecker products.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np

from algebra.free.left_action import left_multiplication
from algebra.milnor.ppart import degree, trimmed
from fp import from_bool, quasi_inverse_with_identity, to_bool, words
from nassau.engine.resolution import Resolution
from nassau.products.ext_class import ExtClass
from nassau.products.yoneda import Yoneda


class TensorSquare:
    """C = Y (x) Y in each (m, t): its basis is the blocks Y_j(t1) (x) Y_{m-j}(t - t1), row-major inside a block."""

    def __init__(self, y: Yoneda) -> None:
        self.y = y
        self.top = y.top
        self.act = lru_cache(maxsize=None)(self._act)
        self.d = lru_cache(maxsize=None)(self._d)
        self.blocks = lru_cache(maxsize=None)(self._blocks)
        self._y_act = lru_cache(maxsize=None)(self._y_action)
        self._y_d = lru_cache(maxsize=None)(self._y_differential)
        self._qi = lru_cache(maxsize=None)(self._quasi_inverse)

    # -- Y ---------------------------------------------------------------------------------------------------------
    def ydim(self, j: int, t: int) -> int:
        return len(self.y.surviving(j, t)) if 0 <= j <= self.top else 0

    def _y_action(self, j: int, t: int, r: tuple[int, ...]) -> np.ndarray:
        """P(R) on Y_j(t) -> Y_j(t + |R|), over the surviving bases (uint8)."""
        e = degree(r)
        src, dst = self.y.surviving(j, t), self.y.surviving(j, t + e)
        if not len(src) or not len(dst):
            return np.zeros((len(src), len(dst)), dtype=np.uint8)
        if e == 0:
            return np.eye(len(src), dtype=np.uint8)
        fs = self.y.res.free(j)
        prod = left_multiplication(fs, r, t, self.y.ngens(j, t), src)
        full = np.zeros((len(src), words(self.y.width(j, t + e))), dtype=np.uint64)
        full[:, :prod.shape[1]] = prod
        reduced = self.y.relations[(j, t + e)].reduce(full)
        return to_bool(reduced, self.y.width(j, t + e))[:, dst].astype(np.uint8)

    def _y_differential(self, j: int, t: int) -> np.ndarray:
        """d_j on Y_j(t) -> Y_{j-1}(t) over the surviving bases (uint8)."""
        src, dst = self.y.surviving(j, t), self.y.surviving(j - 1, t) if j > 0 else np.zeros(0, dtype=np.int64)
        if not len(src) or not len(dst):
            return np.zeros((len(src), len(dst)), dtype=np.uint8)
        images = self.y.relations[(j - 1, t)].reduce(self.y.differential(j, t, src))
        return to_bool(images, self.y.width(j - 1, t))[:, dst].astype(np.uint8)

    # -- C ---------------------------------------------------------------------------------------------------------
    def _blocks(self, m: int, t: int) -> tuple[dict[tuple[int, int], int], int]:
        """Offset of each block (j, t1) in C_m(t), and dim C_m(t)."""
        offsets, total = {}, 0
        for j in range(max(0, m - self.top), min(m, self.top) + 1):
            for t1 in range(t + 1):
                size = self.ydim(j, t1) * self.ydim(m - j, t - t1)
                if size:
                    offsets[(j, t1)] = total
                    total += size
        return offsets, total

    def dim(self, m: int, t: int) -> int:
        return self.blocks(m, t)[1]

    def _d(self, m: int, t: int) -> np.ndarray:
        """d: C_m(t) -> C_{m-1}(t), a (x) b -> da (x) b + a (x) db (uint8)."""
        src, n_src = self.blocks(m, t)
        dst, n_dst = self.blocks(m - 1, t)
        out = np.zeros((n_src, n_dst), dtype=np.uint8)
        for (j, t1), o in src.items():
            t2 = t - t1
            a_dim, b_dim = self.ydim(j, t1), self.ydim(m - j, t2)
            if (j, t1) in dst:  # a (x) db
                out[o:o + a_dim * b_dim, dst[(j, t1)]:dst[(j, t1)] + a_dim * self.ydim(m - j - 1, t2)] ^= np.kron(
                    np.eye(a_dim, dtype=np.uint8), self._y_d(m - j, t2))
            if (j - 1, t1) in dst:  # da (x) b
                out[o:o + a_dim * b_dim, dst[(j - 1, t1)]:dst[(j - 1, t1)] + self.ydim(j - 1, t1) * b_dim] ^= np.kron(
                    self._y_d(j, t1), np.eye(b_dim, dtype=np.uint8))
        return out

    def swap(self, m: int, t: int, v: np.ndarray) -> np.ndarray:
        """tau(v): a (x) b -> b (x) a."""
        blocks, n = self.blocks(m, t)
        out = np.zeros(n, dtype=np.uint8)
        for (j, t1), o in blocks.items():
            a_dim, b_dim = self.ydim(j, t1), self.ydim(m - j, t - t1)
            part = v[o:o + a_dim * b_dim].reshape(a_dim, b_dim).T
            p = blocks[(m - j, t - t1)]
            out[p:p + a_dim * b_dim] ^= part.reshape(-1)
        return out

    def _act(self, m: int, t: int, r: tuple[int, ...]) -> np.ndarray:
        """P(R): C_m(t) -> C_m(t + |R|) through the coproduct (uint8)."""
        e = degree(r)
        src, n_src = self.blocks(m, t)
        dst, n_dst = self.blocks(m, t + e)
        out = np.zeros((n_src, n_dst), dtype=np.uint8)
        for left in product(*(range(x + 1) for x in r)):
            right = tuple(x - y for x, y in zip(r, left))
            e1 = degree(left)
            for (j, t1), o in src.items():
                t2 = t - t1
                if (j, t1 + e1) not in dst:
                    continue
                a, b = self._y_act(j, t1, trimmed(left)), self._y_act(m - j, t2, trimmed(right))
                if a.size and b.size:
                    p = dst[(j, t1 + e1)]
                    out[o:o + a.shape[0] * b.shape[0], p:p + a.shape[1] * b.shape[1]] ^= np.kron(a, b)
        return out

    def _quasi_inverse(self, m: int, t: int):
        d = self.d(m, t)
        return quasi_inverse_with_identity(from_bool(d.astype(bool)), d.shape[1])

    def preimage(self, m: int, t: int, r: np.ndarray) -> np.ndarray:
        """A preimage of r (a cycle of C_{m-1}(t)) under d: C_m(t) -> C_{m-1}(t), by the RREF quasi-inverse."""
        qi = self._qi(m, t)
        x = qi.apply(from_bool(r.astype(bool)[None, :]))
        return to_bool(x, self.dim(m, t))[0].astype(np.uint8)


def squares(res: Resolution, x: ExtClass) -> tuple[Yoneda, list[tuple[int, tuple[int, ...]]]]:
    """The Yoneda representative of x and [(j, Sq^j x)] for j = s, s - 1, ..., 0, each a vector in the Ext basis of
    (2n + s + (s - j), 2s - (s - j)); res must reach (2s, 2t)."""
    y = Yoneda(res, x)
    c = TensorSquare(y)
    s, t = x.s, x.t
    delta: dict[tuple[int, int, int], np.ndarray] = {}
    out = []
    for i in range(s + 1):
        for m in range(2 * s - i + 1):
            fm = res.free(m)
            for deg in range(res.min_degree + m, 2 * t + 1):
                for g in range(fm.gens_below(deg), fm.gens_below(deg + 1)):
                    delta[(i, m, g)] = _lift_one(res, c, delta, i, m, g, deg)
        fm = res.free(2 * s - i)
        gens = range(fm.gens_below(2 * t), fm.gens_below(2 * t + 1))
        out.append((s - i, tuple(int(delta[(i, 2 * s - i, g)][0]) for g in gens)))
    return y, out


def _lift_one(res: Resolution, c: TensorSquare, delta: dict, i: int, m: int, g: int, deg: int) -> np.ndarray:
    """Delta_i on generator g of F_m (degree deg)."""
    n = c.dim(m + i, deg)
    if i == 0 and m == 0:
        return np.ones(n, dtype=np.uint8)  # iota -> 1 (x) 1, the only element of C_0(0)
    below = c.dim(m + i - 1, deg)
    if not n or not below:
        return np.zeros(n, dtype=np.uint8)
    r = np.zeros(below, dtype=np.uint8)
    if i > 0:
        v = delta[(i - 1, m, g)]
        r ^= v ^ c.swap(m + i - 1, deg, v)
    if m > 0:
        for y, rr, y_deg in _terms(res, m, g, deg):
            image = delta[(i, m - 1, y)]
            if image.any():
                r ^= ((image.astype(np.int64) @ c.act(m - 1 + i, y_deg, rr).astype(np.int64)) % 2).astype(np.uint8)
    return c.preimage(m + i, deg, r)


def _terms(res: Resolution, m: int, g: int, deg: int) -> list[tuple[int, tuple[int, ...], int]]:
    """d g as (generator y of F_{m-1}, R, deg y) for its terms P(R) y."""
    vec, ngens = res.differential(m).output(g)
    fb = res.free(m - 1)
    off = fb.offsets(deg, ngens)
    bits = np.nonzero(to_bool(vec[None, :], int(off[-1]))[0])[0]
    out = []
    for b in bits:
        y = int(np.searchsorted(off, b, side="right") - 1)
        y_deg = int(fb.gen_degrees[y])
        out.append((y, res.algebra.element(deg - y_deg, int(b - off[y])), y_deg))
    return out


def steenrod_lines(x: ExtClass, y: Yoneda, values: list[tuple[int, tuple[int, ...]]]) -> list[str]:
    """The reference's steenrod output."""
    name = " + ".join(f"x_({x.n}, {x.s}, {i})" for i, v in enumerate(x.vector) if v)
    dims = " ".join(str(y.dimension(s)) for s in range(y.top + 1))
    lines = [f"Dimensions of Yoneda representative: 1 {dims}"]
    lines += [f"Sq^{j} {name} = [{', '.join(str(v) for v in vec)}]" for j, vec in values]
    return lines
