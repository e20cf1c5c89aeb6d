"""One bidegree of the standard minimal-resolution algorithm (REFERENCE 4).

At (s, t): row-reduce [d_s | I] on the old generators of F_s in degree t. The rows whose pivot lies in
I span ker d_s (kept for (s+1, t)); the pivots in the d segment span the image. The new generators are
the rows of ker d_{s-1} (from (s-1, t)) whose pivot column the image lacks, in column order, exactly
the reference's `extend_image` choice, so the Ext bases match the reference's. At s = 0 the map is the
augmentation onto M and the new generators hit the basis vectors of M_t outside its image.
"""
from __future__ import annotations

import numpy as np

from fp import F2, Augmented, QuasiInverse, RowBlocks, Subspace, field
from fp.row_blocks import whole
from nassau.engine.resolution import Resolution


def reduced_with_identity(a: np.ndarray, ncols: int, field_: F2 | None = None) -> tuple[Augmented, np.ndarray]:
    """[A | I] (A is rows x ncols over the field, F2 packed by default) in reduced row echelon form, and its
    pivot columns."""
    aug = Augmented(a.shape[0], [ncols, a.shape[0]], field_)
    aug.set_segment(0, a)
    aug.fill_identity(1)
    return aug, aug.row_reduce()


def quasi_inverse_with_identity(a: np.ndarray, ncols: int, field_: F2 | None = None) -> QuasiInverse:
    """A quasi-inverse of A (rows x ncols over the field) from [A | I] reduced: the field's Augmented-free path
    where it has one (a small A over F2: every Nassau signature block), an Augmented elsewhere."""
    f = field(2) if field_ is None else field_
    split = f.quasi_inverse(a, ncols)
    if split is not None:
        return QuasiInverse(split[0], split[1], a.shape[0], f)
    aug, pivots = reduced_with_identity(a, ncols, field_)
    return aug.quasi_inverse(pivots, 0, 1)


def reduce_with_identity(a: np.ndarray | RowBlocks, ncols: int,
                         field_: F2 | None = None) -> tuple[np.ndarray, Subspace]:
    """Row-reduce [A | I]; return the pivot columns of A's image and the RREF kernel of A (over A's rows). A may
    come in row blocks (differential_rows), built whole only where the reduction takes it whole.

    Without rows or without columns [A | I] is already reduced (no image, every row in the kernel): half the
    jobs of a resolution over a small algebra such as A(1) are such empty ones, not worth an Augmented. Where the
    field has a path that builds none (a small A over F2; a large one at p = 3, 5, 7: field.image_and_kernel), it
    takes it."""
    f = field(2) if field_ is None else field_
    if len(a) == 0 or ncols == 0:
        rows = np.arange(len(a), dtype=np.int64)
        return rows[:0], Subspace.from_rref(f.identity(len(rows)), rows, len(rows), f)
    split = f.image_and_kernel(a, ncols)
    if split is not None:
        image, basis, pivots = split
        return image, Subspace.from_rref(basis, pivots, len(a), f)
    aug, pivots = reduced_with_identity(whole(a), ncols, field_)
    return pivots[pivots < aug.segment_columns(1)[0]], aug.kernel(pivots, 1)


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


def step_standard(res: Resolution, s: int, t: int, keep_kernel: bool = True) -> int:
    """(s, t): new generators of F_s in degree t from ker d_{s-1} modulo the image of d_s.

    keep_kernel caches ker d_s in degree t for (s+1, t).
    """
    if s == 0:
        return step0(res, t, keep_kernel)
    fs, target = res.free(s), res.free(s - 1)
    ngens = fs.gens_below(t)
    n = fs.dimension(t, ngens)
    target_ngens = target.gens_below(t + 1)
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
