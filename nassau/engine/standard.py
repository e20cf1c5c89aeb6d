"""One bidegree of the standard minimal-resolution algorithm (REFERENCE 4).

At (s, t): row-reduce [d_s | I] on the old generators of F_s in degree t. The rows whose pivot lies in
I span ker d_s (kept for (s+1, t)); the pivots in the d segment span the image. The new generators are
the rows of ker d_{s-1} (from (s-1, t)) whose pivot column the image lacks, in column order, exactly
the reference's `extend_image` choice, so the Ext bases match the reference's. At s = 0 the map is the
augmentation onto M and the new generators hit the basis vectors of M_t outside its image.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fp import F2, RowBlocks, Subspace, field, reduce_with_identity

if TYPE_CHECKING:
    from nassau.engine.resolution import Resolution


def augmentation_matrix(res: Resolution, t: int, ngens: int) -> np.ndarray:
    """Rows P(R) g of F_0 in degree t (first ngens generators) mapped into M_t, over the resolution's field."""
    f0, module = res.free(0), res.module
    off = f0.offsets(t, ngens)
    out = np.zeros((int(off[-1]), module.dimension(t)), dtype=np.int64)
    for g in range(ngens):
        gdeg = int(f0.gen_degrees[g])
        eps = res.augmentation[g].astype(np.int64)
        if t == gdeg:
            out[off[g]] = eps
            continue
        table = module.action_table(t - gdeg, gdeg)
        if table is not None:  # an unstable block is a prefix of the algebra's basis: the rows it has
            out[off[g]:off[g + 1]] = np.einsum("i,aio->ao", eps, table[:off[g + 1] - off[g]].astype(np.int64))
    return res.field.from_ints(out)


def differential_rows(res: Resolution, s: int, t: int, n: int, target_ngens: int, ncols: int) -> RowBlocks:
    """d_s in degree t on the first n basis elements of F_s, into the first target_ngens blocks of F_{s-1} (ncols
    columns), as row blocks: the reduction builds it a block at a time where it can (at odd p)."""
    d = res.differential(s)
    return RowBlocks(n, res.field.storage(ncols) * res.field.dtype.itemsize,
                     lambda r0, r1: d.matrix(t, np.arange(r0, r1, dtype=np.int64), target_ngens))


def pad_columns(rows: np.ndarray, ncols: int, field_: F2 | None = None) -> np.ndarray:
    """The same rows over a wider basis (new generator blocks append zero columns)."""
    f = field(2) if field_ is None else field_
    need = f.storage(ncols)
    if rows.shape[1] == need:
        return rows
    out = f.zeros(rows.shape[0], ncols)
    out[:, : rows.shape[1]] = rows
    return out


def kernel_of(res: Resolution, s: int, t: int) -> Subspace:
    """ker d_s (or ker epsilon at s = 0) in degree t: the cached one, or computed now from the generators below t.

    The generators of degree t never meet the kernel (their images are independent modulo the image of
    the old ones), so the kernel of the old part, padded with zero columns, is the whole kernel.
    """
    cached = res.take_kernel(s, t)
    if cached is not None:
        return cached
    if s == 0:
        ngens = res.free(0).gens_below(t)
        return reduce_with_identity(augmentation_matrix(res, t, ngens), res.module.dimension(t), res.field)[1]
    fs, target = res.free(s), res.free(s - 1)
    ngens = fs.gens_below(t)
    target_ngens = target.gens_below(t)
    ncols = target.dimension(t, target_ngens)
    return reduce_with_identity(differential_rows(res, s, t, fs.dimension(t, ngens), target_ngens, ncols), ncols,
                                res.field)[1]


def cycles(res: Resolution, s: int, t: int) -> Subspace:
    """What F_s must cover in degree t: ker d_{s-1} (ker epsilon for s = 1), or a cofiber's N at its cut."""
    cut = res.truncation
    if cut is not None and s == cut.s:
        return cut.cycles(t)
    return kernel_of(res, s - 1, t)


def step0(res: Resolution, t: int, keep_kernel: bool = True) -> int:
    """(0, t): make F_0 -> M onto in degree t."""
    f0 = res.free(0)
    ngens = f0.gens_below(t)
    eps = augmentation_matrix(res, t, ngens)
    m_dim = res.module.dimension(t)
    image_pivots, kernel = reduce_with_identity(eps, m_dim, res.field)
    hit = np.zeros(m_dim, dtype=bool)
    hit[image_pivots] = True
    outputs = np.eye(m_dim, dtype=np.uint8)[~hit]
    if keep_kernel:
        res.set_kernel(0, t, kernel)
    res.add_generators(0, t, outputs)
    return len(outputs)


def step_standard(res: Resolution, s: int, t: int, keep_kernel: bool = True, relaxed: bool = False) -> int:
    """(s, t): new generators of F_s in degree t from ker d_{s-1} modulo the image of d_s.

    keep_kernel caches ker d_s in degree t for (s+1, t). relaxed: the step may run before (s - 1, t), as Nassau's
    steps do (after (s, t - 1) and (s - 1, t - 1) only), so it reads F_{s-1}'s generators below t alone: d_s of
    the old generators never reaches one of degree t (minimality), and ker d_{s-1} is found from those below t.
    """
    if s == 0:
        return step0(res, t, keep_kernel)
    fs, target = res.free(s), res.free(s - 1)
    ngens = fs.gens_below(t)
    n = fs.dimension(t, ngens)
    target_ngens = target.gens_below(t if relaxed else t + 1)
    ncols = target.dimension(t, target_ngens)
    if n == 0 and ncols == 0:  # F_s and F_{s-1} vanish in degree t (most jobs over A(1)): nothing to reduce
        cycles(res, s, t)  # the empty ker d_{s-1} kept for this job
        if keep_kernel:
            res.set_kernel(s, t, Subspace(0, res.field))
        res.add_generators(s, t, res.field.zeros(0, 0), target_ngens)
        return 0
    image_pivots, kernel = reduce_with_identity(differential_rows(res, s, t, n, target_ngens, ncols), ncols,
                                                res.field)
    if keep_kernel:
        res.set_kernel(s, t, kernel)
    desired = cycles(res, s, t)
    in_image = np.zeros(ncols, dtype=bool)
    in_image[image_pivots] = True
    fresh = ~in_image[desired.pivots]
    outputs = pad_columns(desired.basis[fresh], ncols, res.field)
    res.add_generators(s, t, outputs, target_ngens)
    return int(fresh.sum())
