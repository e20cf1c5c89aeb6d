"""One bidegree of Nassau's algorithm (arXiv 1910.04063; REFERENCE 5.2-5.3), for s >= 2.

Pick the largest sub-Hopf algebra B whose Ext vanishes at (s, t - top cell). Above that line the
zero-signature part of the resolution (a model of A//B tensored over B) is exact, so:
1. ker of d_{s-1} on the zero-signature rows and columns (a matrix |B| times smaller) gives the cycles,
2. the zero-signature image of d_s on the old generators is reduced, and the kernel rows whose pivots
   the image lacks become the new generators, chosen as the reference chooses them;
3. each new cycle x is completed signature by signature (lower first): the sigma-part of d(x) is cancelled
   through a quasi-inverse of d_{s-1} on the sigma rows and columns. A signature whose part of d(x) is
   already zero needs no matrix at all, so most are skipped.
The step reads only generators below t of F_{s-1} and below t-1 of F_{s-2}, so it may run as soon as
(s, t-1) and (s-1, t-1) are done.
"""
from __future__ import annotations

import numpy as np

from algebra.module import Module
from algebra.milnor_kernels import signature_forbid
from algebra.subalgebra import optimal_subalgebra
from fp import gather_columns, gf2_matmul, row_reduce, scatter_columns, words
from nassau.resolution import Resolution
from nassau.standard import reduce_with_identity, reduced_with_identity


def nassau_qualifies(module: Module) -> str:
    """Empty if Nassau's algorithm applies to the module, else the reason it does not."""
    if not module.profile.is_full:
        return f"it is a module over {module.profile.describe()}, not over the whole Steenrod algebra"
    if getattr(module, "cofiber", None) is not None:
        return "it is defined as a cofiber"
    if module.max_degree is None:
        return "it is infinite, and the algorithm's vanishing line is measured from a top cell"
    return ""


def step_nassau(res: Resolution, s: int, t: int) -> int:
    """(s, t) for s >= 2 by Nassau's algorithm; returns the number of new generators."""
    module = res.module
    sub = optimal_subalgebra(s, t - module.max_degree)
    fs, tgt, nxt = res.free(s), res.free(s - 1), res.free(s - 2)
    d_prev, d_here = res.differential(s - 1), res.differential(s)
    ng_s, ng_t, ng_n = fs.gens_below(t), tgt.gens_below(t), nxt.gens_below(t - 1)
    dim_t, dim_n = tgt.dimension(t, ng_t), nxt.dimension(t, ng_n)
    mask = np.uint64(sub.mask)
    sig_t = tgt.basis_words(t, ng_t)[1] & mask
    sig_n = nxt.basis_words(t, ng_n)[1] & mask

    def restricted(d, rows: np.ndarray, ngens: int, width: int, cols: np.ndarray, sig: tuple[int, ...]) -> np.ndarray:
        """d on the given rows, only the columns of one signature: products of other signatures are never made."""
        col_map = np.full(width, -1, dtype=np.int64)
        col_map[cols] = np.arange(len(cols))
        return d.matrix(t, rows, ngens, col_map=col_map, ncols=len(cols), forbid=signature_forbid(sub.profile, sig))

    # 1. Zero-signature kernel of d_{s-1}.
    z_t = np.nonzero(sig_t == 0)[0]
    z_n = np.nonzero(sig_n == 0)[0]
    _, k0 = reduce_with_identity(restricted(d_prev, z_t, ng_n, dim_n, z_n, ()), len(z_n))

    # 2. Zero-signature image of d_s on the old generators, and the new generators.
    z_s = np.nonzero((fs.basis_words(t, ng_s)[1] & mask) == 0)[0]
    image = restricted(d_here, z_s, ng_t, dim_t, z_t, ())
    image_pivots = row_reduce(image, len(z_t))
    fresh = ~np.isin(k0.pivots, image_pivots)
    count = int(fresh.sum())
    x = scatter_columns(k0.basis[fresh], z_t, dim_t)
    if count:
        dx = _apply_full(d_prev, t, x, dim_t, ng_n, dim_n)
        # 3. Corrections, signature by signature.
        for sig in sub.signatures(t):
            word = np.uint64(sub.signature_word(sig))
            rows_n = np.nonzero(sig_n == word)[0]
            if len(rows_n) == 0:
                continue
            target = gather_columns(dx, rows_n)
            if not target.any():
                continue
            rows_t = np.nonzero(sig_t == word)[0]
            y = scatter_columns(_preimages(restricted(d_prev, rows_t, ng_n, dim_n, rows_n, sig), len(rows_n), target),
                                rows_t, dim_t)
            x ^= y
            dx ^= _apply_full(d_prev, t, y, dim_t, ng_n, dim_n)
        if dx.any():
            raise AssertionError(f"Nassau step ({s}, {t}) over {sub.describe()} left a nonzero boundary")
    res.add_generators(s, t, x, ng_t)
    return count


def _apply_full(d, t: int, v: np.ndarray, dim_v: int, ngens: int, width: int) -> np.ndarray:
    """d applied to each row of v (packed over its source), computing only the rows v actually uses."""
    used = np.bitwise_or.reduce(v, axis=0) if len(v) else np.zeros(words(dim_v), dtype=np.uint64)
    support = np.nonzero(np.unpackbits(used.view(np.uint8), bitorder="little")[:dim_v])[0]
    if len(support) == 0:
        return np.zeros((v.shape[0], words(width)), dtype=np.uint64)
    return gf2_matmul(gather_columns(v, support), d.matrix(t, support, ngens), len(support), width)


def _preimages(a: np.ndarray, ncols: int, targets: np.ndarray) -> np.ndarray:
    """Preimages under A (rows x ncols) of the given vectors, which must lie in A's image."""
    aug, pivots = reduced_with_identity(a, ncols)
    return aug.quasi_inverse(pivots, 0, 1).apply(targets)
