"""Slow twins for the motivic engine: everything weight by weight, with ranks of plain 0/1 matrices.

Over F_2[tau] a free module in one internal degree is, in weight w, the span of its basis elements of weight <= w
(tau = 1), so every statement of nassau.engine.motivic is a statement about ranks of row subsets, checked here one
weight at a time (design (a) of the motivic notes: the oracle, never the engine's path).
"""
from __future__ import annotations

import numpy as np

from fp.packed import to_bool


def rank(rows: np.ndarray) -> int:
    """The F_2 rank of a 0/1 matrix, by plain elimination."""
    a = np.array(rows, dtype=bool)
    r = 0
    for c in range(a.shape[1] if a.ndim == 2 else 0):
        hit = np.nonzero(a[r:, c])[0]
        if len(hit) == 0:
            continue
        p = r + hit[0]
        a[[r, p]] = a[[p, r]]
        below = np.nonzero(a[:, c])[0]
        for i in below:
            if i != r:
                a[i] ^= a[r]
        r += 1
        if r == a.shape[0]:
            break
    return r


def fresh_per_weight(rows: np.ndarray, weights: np.ndarray, cycles: np.ndarray, cycle_weights: np.ndarray
                     ) -> dict[int, int]:
    """How many new generators each weight w needs: dim (I_w + K_w) - dim (I_w + K_{w-1}), with I_w the rows of
    weight <= w and K_w the cycles of weight <= w (bool matrices)."""
    out = {}
    for w in sorted(set(cycle_weights.tolist())):
        low = np.concatenate([rows[weights <= w], cycles[cycle_weights < w]])
        high = np.concatenate([rows[weights <= w], cycles[cycle_weights <= w]])
        if rank(high) > rank(low):
            out[w] = rank(high) - rank(low)
    return out


def kernel_per_weight(rows: np.ndarray, weights: np.ndarray) -> dict[int, int]:
    """dim (ker of the rows) in weight w, for each weight the rows have: #rows of weight <= w - their rank."""
    return {w: int((weights <= w).sum()) - rank(rows[weights <= w]) for w in sorted(set(weights.tolist()))}


def exactness_defects(res, s: int, t: int) -> list[int]:
    """The weights at which F_s -> F_{s-1} -> F_{s-2} (-> M at s = 1; F_0 -> M onto at s = 0) fails to be exact in
    degree t, comparing image and kernel weight by weight from the full matrices (empty: exact)."""
    d_rows, d_w, _ = _full(res, s, t)
    if s == 0:
        m_w = res.motivic.weight(t)
        return [w for w in sorted(set(m_w.tolist())) if rank(d_rows[d_w <= w]) != int((m_w <= w).sum())]
    below_rows, below_w, _ = _full(res, s - 1, t)
    bad = []
    for w in sorted(set(below_w.tolist()) | set(d_w.tolist())):
        kernel = int((below_w <= w).sum()) - rank(below_rows[below_w <= w])
        if rank(d_rows[d_w <= w]) != kernel:
            bad.append(w)
    return bad


def _full(res, s: int, t: int) -> tuple[np.ndarray, np.ndarray, int]:
    """d_s (epsilon at s = 0) in degree t on every generator of degree <= t, as bool rows, with the row weights."""
    from nassau.engine.motivic import _matrix

    rows, weights, ncols = _matrix(res, s, t, res.free(s).gens_below(t + 1))
    return to_bool(rows, ncols), weights, ncols


def kernel_from_the_transpose(coords: np.ndarray, weights: np.ndarray, fresh: np.ndarray):
    """ker d_s as a step found it before FactoredCycles: ker C' (C' = coords without the new generators' columns)
    by one elimination of C'^T with the rows by decreasing weight (fp.left_kernel), then b = a C on the new
    generators' coordinates; a dense Cycles, the twin of reduce_weighted's kernel."""
    from fp import field
    from fp.left_kernel import left_kernel
    from nassau.engine.motivic import Cycles

    f = field(2)
    n = len(weights)
    order = np.argsort(-weights, kind="stable")
    old, new = np.nonzero(~fresh)[0], np.nonzero(fresh)[0]
    relations = left_kernel(coords, old, order)
    a = relations.basis
    b = f.matmul(a, f.gather(coords, new)[order], n, len(new))
    width = n + len(new)
    basis = f.scatter(a, np.arange(n), width) | f.scatter(b, np.arange(n, width), width)
    pivots = order[relations.pivots]
    by_pivot = np.argsort(pivots)
    pivots = pivots[by_pivot]
    return Cycles(basis[by_pivot], weights[pivots], pivots, np.concatenate([order, np.arange(n, width)]))
