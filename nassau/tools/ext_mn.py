"""Ext_A(M, N) for a bounded module N: the cohomology of Hom_A(F, N) over M's minimal resolution F.

A degree-t element of Hom_A(F_s, N) gives each generator g of F_s an element of N_{|g|-t}, so its basis is
one block of N's basis per generator with t + min N <= |g| <= t + max N. The coboundary is f -> f d:
on a generator h of F_{s+1} it is the sum, over the terms a g of d(h), of a f(g). Then
dim Ext^{s,t} = dim Hom_s - rank delta_s - rank delta_{s-1} in degree t. N is never resolved
(REFERENCE-MODULES 5); the chart has columns n = min M - max N .. N for every s.
"""
from __future__ import annotations

import numpy as np

from algebra.module.interface import Module
from algebra.module.spec import ModuleError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution


def resolution_region(source: Module, target: Module, region: Region) -> Region:
    """How far M must be resolved: one more filtration, and max N further in t (or in stem)."""
    top = _top(target)
    if region.max_stem is not None:
        return Region(max_s=region.max_s + 1, min_degree=source.min_degree, max_stem=region.max_stem + top)
    return Region(max_s=region.max_s + 1, min_degree=source.min_degree, max_t=region.max_t + top)


def chart_min_degree(source: Module, target: Module) -> int:
    return source.min_degree - _top(target)


def _top(target: Module) -> int:
    if target.max_degree is None:
        raise ModuleError(f"{target.name} is infinite; Ext(M, N) needs a bounded N")
    return target.max_degree


def check_compatible(source: Module, target: Module) -> None:
    """Ext(M, N) needs both modules over one algebra at one prime."""
    if source.algebra.prime != target.algebra.prime:
        raise ModuleError(f"Ext({source.name}, {target.name}) needs one prime: {source.name} is at p = "
                          f"{source.algebra.prime}, {target.name} at p = {target.algebra.prime}")
    if source.profile != target.profile:
        raise ModuleError(f"{target.name} lives over {target.profile.describe()}, {source.name} over "
                          f"{source.profile.describe()}; Ext needs one algebra")


def ext_dims(res: Resolution, target: Module, region: Region) -> dict[tuple[int, int], int]:
    """dim Ext^{s,t}(M, N) for every (s, t) of the region (keyed (s, t), zeros included)."""
    check_compatible(res.module, target)
    ranks: dict[tuple[int, int], int] = {}
    homs: dict[tuple[int, int], int] = {}
    for s, t in region.bidegrees():
        for k in (s - 1, s):
            if k >= 0 and (k, t) not in ranks:
                ranks[(k, t)], homs[(k, t)] = _coboundary_rank(res, target, k, t)
    return {(s, t): homs[(s, t)] - ranks[(s, t)] - ranks.get((s - 1, t), 0) for s, t in region.bidegrees()}


def _blocks(res: Resolution, target: Module, s: int, t: int) -> tuple[dict[int, int], int]:
    """Offset of each generator's block in Hom_s in degree t, and the dimension."""
    degrees = res.free(s).gen_degrees
    offsets, size = {}, 0
    for g in np.nonzero((degrees >= t + target.min_degree) & (degrees <= t + target.max_degree))[0]:
        dim = target.dimension(int(degrees[g]) - t)
        if dim:
            offsets[int(g)] = size
            size += dim
    return offsets, size


def _coboundary_rank(res: Resolution, target: Module, s: int, t: int) -> tuple[int, int]:
    """(rank of delta_s, dim Hom_s) in degree t."""
    rows, n_rows = _blocks(res, target, s, t)
    cols, n_cols = _blocks(res, target, s + 1, t)
    if not n_rows or not n_cols:
        return 0, n_rows
    matrix = np.zeros((n_rows, n_cols), dtype=np.int64)
    d = res.differential(s + 1)
    degrees = res.free(s).gen_degrees
    alg = res.algebra
    for h, col in cols.items():
        for k in range(int(d.term_start[h]), int(d.term_start[h + 1])):
            g = int(d.term_gen[k])
            if g not in rows:
                continue
            op_deg = int(d.term_sdeg[k])
            table = target.action_table(op_deg, int(degrees[g]) - t)
            if table is None:
                continue
            block = table[alg.index(alg.unpack(int(d.term_s[k]))) if op_deg else 0]
            matrix[rows[g]:rows[g] + block.shape[0], col:col + block.shape[1]] += int(d.term_coef[k]) * block
    f = res.field
    return len(f.row_reduce(f.from_ints(matrix), n_cols)), n_rows
