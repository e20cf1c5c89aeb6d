"""The slow, obvious twin of chain-map lifting (tests only): one generator at a time, one Milnor product at a time,
matrices as numpy booleans reduced by plain Gauss-Jordan. With the standard quasi-inverse (the RREF of [d | I],
which is unique) it must give the engine's images bit for bit."""
from __future__ import annotations

import numpy as np

from algebra.milnor.products import multiply_one
from algebra.module.interface import act
from fp import to_bool
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap


def basis(res: Resolution, s: int, t: int, ngens: int) -> list[tuple[int, tuple[int, ...]]]:
    """(generator, R) for each basis element P(R) g of F_s(t) over the first ngens generators, in basis order."""
    fs = res.free(s)
    out = []
    for g in range(ngens):
        e = t - int(fs.gen_degrees[g])
        for k in range(res.algebra.dimension(e) if e >= 0 else 0):
            out.append((g, res.algebra.element(e, k)))
    return out


def times(res: Resolution, s: int, t: int, ngens: int, r: tuple[int, ...], terms: list[tuple[int, tuple[int, ...]]],
          ) -> np.ndarray:
    """P(R) times the element sum of P(S) h (terms) of F_s, as a bool vector over F_s(t) (first ngens generators)."""
    fs = res.free(s)
    off = fs.offsets(t, ngens)
    out = np.zeros(int(off[-1]), dtype=bool)
    for h, sq in terms:
        e = t - int(fs.gen_degrees[h])
        prod = to_bool(multiply_one(res.algebra, r, sq)[None, :], res.algebra.dimension(e))[0]
        out[off[h]:off[h + 1]] ^= prod
    return out


def rref_preimage(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The RREF quasi-inverse of a (rows -> columns) applied to y: Gauss-Jordan on [a | I], one row at a time."""
    rows, cols = a.shape
    m = np.concatenate([a, np.eye(rows, dtype=bool)], axis=1)
    pivots = []
    r = 0
    for c in range(m.shape[1]):  # the I part too: its pivots (kernel rows) reduce the preimages
        hit = [i for i in range(r, rows) if m[i, c]]
        if not hit:
            continue
        m[[r, hit[0]]] = m[[hit[0], r]]
        for i in range(rows):
            if i != r and m[i, c]:
                m[i] ^= m[r]
        pivots.append(c)
        r += 1
    x = np.zeros(rows, dtype=bool)
    for k, c in enumerate(pivots):
        if c < cols and y[c]:
            x ^= m[k, cols:]
    return x


def naive_lift(f: ChainMap) -> dict[tuple[int, int], np.ndarray]:
    """(input s, generator index) -> bool image over G_{s'}(t') (generators of degree <= t'), for every generator
    the engine lifted, computed from scratch."""
    src, tgt = f.source, f.target
    images: dict[tuple[int, int], np.ndarray] = {}
    for s in sorted(f.lifted):
        for t in range(f.bottom(s), f.lifted[s] + 1):
            gs, tt = s - f.s_shift, t - f.t_shift
            fs = src.free(s)
            first, last = fs.gens_below(t), fs.gens_below(t + 1)
            if first == last:
                continue
            if tt < tgt.min_degree + gs:
                for g in range(first, last):
                    images[(s, g)] = np.zeros(0, dtype=bool)
                continue
            g_ngens = tgt.free(gs).gens_below(tt + 1)
            rows = basis(tgt, gs, tt, g_ngens)
            if gs == 0:
                a = np.array([act(tgt.module, r, int(tgt.free(0).gen_degrees[g]), tgt.augmentation[g]).astype(bool)
                              for g, r in rows]).reshape(len(rows), -1)
                targets = f.initial(t).astype(bool).reshape(last - first, -1)
            else:
                below = tgt.free(gs - 1).gens_below(tt)
                d = tgt.differential(gs)
                a = np.array([times(tgt, gs - 1, tt, below, r, _terms(tgt, gs - 1, d.output(g), int(
                    tgt.free(gs).gen_degrees[g]))) for g, r in rows]).reshape(len(rows), -1)
                targets = np.array([_f_of_dx(f, images, s, t, g, below) for g in range(first, last)])
            for k, g in enumerate(range(first, last)):
                images[(s, g)] = rref_preimage(a, targets[k])
    return images


def _terms(res: Resolution, s: int, packed: tuple[np.ndarray, int], t: int) -> list[tuple[int, tuple[int, ...]]]:
    vec, ngens = packed
    b = basis(res, s, t, ngens)
    bits = to_bool(vec[None, :], len(b))[0]
    return [b[i] for i in np.nonzero(bits)[0]]


def _f_of_dx(f: ChainMap, images: dict, s: int, t: int, g: int, below: int) -> np.ndarray:
    """f_{s-1}(d g) over G_{s'-1}(t') (first `below` generators), one product at a time."""
    src, tgt = f.source, f.target
    gs, tt = s - f.s_shift, t - f.t_shift
    out = np.zeros(tgt.free(gs - 1).dimension(tt, below), dtype=bool)
    for y, r in _terms(src, s - 1, src.differential(s).output(g), t):
        deg_y = int(src.free(s - 1).gen_degrees[y])
        fy = images[(s - 1, y)]
        width = tgt.free(gs - 1).gens_below(deg_y - f.t_shift + 1)
        terms = [basis(tgt, gs - 1, deg_y - f.t_shift, width)[i] for i in np.nonzero(fy)[0]]
        out ^= times(tgt, gs - 1, tt, below, r, terms)
    return out
