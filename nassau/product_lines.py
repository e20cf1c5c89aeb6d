"""The reference's text for products and induced maps: `NAME x_(n, s, j) = [v]` (REFERENCE-PRODUCTS 2.2-2.4)."""
from __future__ import annotations

from typing import Iterable

import numpy as np

from nassau.chain_map import ChainMap
from nassau.ext_algebra import ExtAlgebra
from nassau.ext_class import ExtClass
from nassau.region import Region
from nassau.resolution import Resolution


def vector_text(v: Iterable[int]) -> str:
    """`[1, 0]`, `[]`: how the reference prints an F2 vector."""
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def nonzero_bidegrees(res: Resolution, region: Region) -> list[tuple[int, int]]:
    """(n, s) with generators inside the region, in the reference's iter_stem order (n, then s)."""
    found = [(t - s, s) for (s, t), k in res.dims().items() if k and region.contains(s, t)]
    return sorted(found)


def below_top(region: Region, n: int, s: int) -> bool:
    """Whether (n, s) is not beyond the region's top (below its bottom counts: Ext is zero there)."""
    return 0 <= s <= region.max_s and n + s <= region.row_end(s)


def shifted_region(region: Region, s_shift: int, t_shift: int, min_degree: int) -> Region:
    """The region a map's target must cover: the source's region lowered by the map's shift."""
    max_s = max(0, region.max_s - s_shift)
    if region.max_stem is not None:
        return Region(max_s=max_s, min_degree=min_degree,
                      max_stem=max(min_degree, region.max_stem - (t_shift - s_shift)))
    return Region(max_s=max_s, min_degree=min_degree, max_t=max(min_degree, region.max_t - t_shift))


def product_lines(alg: ExtAlgebra, name: str, b: ExtClass, region: Region) -> list[str]:
    """b times every generator of Ext(M) whose product lands in the region, as the reference's lift_hom prints."""
    res = alg.module
    at = [x for x in nonzero_bidegrees(res, region) if below_top(region, x[0] + b.n, x[1] + b.s)]
    mats = alg.products(b, at)
    lines = []
    for n, s in at:
        for j, row in enumerate(mats[(n, s)]):
            lines.append(f"{name} x_({n}, {s}, {j}) = {vector_text(row)}")
    return lines


def map_lines(f: ChainMap, name: str, target_region: Region) -> list[str]:
    """f^* on every generator of the target's Ext (its region) whose image lies below the source's top."""
    lines = []
    for n, s in nonzero_bidegrees(f.target, target_region):
        src_s, src_t = s + f.s_shift, n + s + f.t_shift
        if not below_top(f.region, src_t - src_s, src_s):
            continue
        for j, row in enumerate(f.hom_k(src_s, src_t)):
            lines.append(f"{name} x_({n}, {s}, {j}) = {vector_text(row)}")
    return lines


def as_rows(mat: np.ndarray) -> list[list[int]]:
    return [[int(v) for v in row] for row in mat]
