"""Products by a class and induced maps, one row per generator, and the reference's text for them:
`NAME x_(n, s, j) = [v]` (REFERENCE-PRODUCTS 2.2-2.4)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.lifting.chain_map import ChainMap
from nassau.products.ext_algebra import ExtAlgebra
from nassau.products.ext_class import ExtClass


class Row(NamedTuple):
    """The value on generator x_(n, s, j): a vector in the Ext basis of the bidegree it lands in."""

    n: int
    s: int
    j: int
    vector: tuple[int, ...]


def lines(name: str, rows: Iterable[Row]) -> list[str]:
    return [f"{name} x_({r.n}, {r.s}, {r.j}) = {vector_text(r.vector)}" for r in rows]


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


def product_rows(alg: ExtAlgebra, b: ExtClass, region: Region) -> list[Row]:
    """b times every generator of Ext(M) whose product lands in the region, in the reference's lift_hom order."""
    at = [x for x in nonzero_bidegrees(alg.module, region) if below_top(region, x[0] + b.n, x[1] + b.s)]
    mats = alg.products(b, at)
    return [Row(n, s, j, _tuple(v)) for n, s in at for j, v in enumerate(mats[(n, s)])]


def map_rows(f: ChainMap, target_region: Region) -> list[Row]:
    """f^* on every generator of the target's Ext (its region) whose image lies below the source's top."""
    rows = []
    for n, s in nonzero_bidegrees(f.target, target_region):
        src_s, src_t = s + f.s_shift, n + s + f.t_shift
        if below_top(f.region, src_t - src_s, src_s):
            rows.extend(Row(n, s, j, _tuple(v)) for j, v in enumerate(f.hom_k(src_s, src_t)))
    return rows


def _tuple(v: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in v)
