"""Filtration-one products h_i = Sq^(2^i) read straight off a minimal resolution (REFERENCE 6.3).

Because the resolution is minimal, h_i x_j in Ext^{s+1} has coordinate 1 on y_k exactly when
Sq^(2^i) x_j occurs in d(y_k): no lifting is needed, only one bit per (x_j, y_k) pair.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nassau.region import Region
from nassau.resolution import Resolution


@dataclass(frozen=True)
class ProductMatrix:
    """h_i on one bidegree: matrix[j][k] is the coefficient of y_k (target basis) in h_i x_j."""

    i: int
    source: tuple[int, int]  # (n, s)
    target: tuple[int, int]
    matrix: np.ndarray  # uint8 (source dim, target dim)


def operations(res: Resolution) -> list[int]:
    """The i with h_i in the algebra, i < 4 (h_0..h_3 over A; fewer over A(n))."""
    return [i for i in range(4) if res.algebra.profile.max_exponent(0) >= (1 << i)]


def product_matrices(res: Resolution, region: Region) -> list[ProductMatrix]:
    """Every h_i matrix between bidegrees of the region, in (stem, s, i) order."""
    out = []
    lo = res.min_degree
    for n in range(lo, region.chart_max_stem + 1):
        for s in range(region.max_s + 1):
            t = n + s
            if not region.contains(s, t) or not res.new_gens.get((s, t)):
                continue
            for i in operations(res):
                t2 = t + (1 << i)
                if not region.contains(s + 1, t2):
                    continue
                out.append(ProductMatrix(i, (n, s), (t2 - s - 1, s + 1), _matrix(res, s, t, t2)))
    return out


def _matrix(res: Resolution, s: int, t: int, t2: int) -> np.ndarray:
    fs = res.free(s)
    first = fs.gens_below(t)
    count = res.new_gens[(s, t)]
    targets = res.free(s + 1)
    ys = range(targets.gens_below(t2), targets.gens_below(t2 + 1))
    mat = np.zeros((count, len(ys)), dtype=np.uint8)
    d = res.differential(s + 1)
    for k, y in enumerate(ys):
        vec, ngens = d.output(y)
        off = fs.offsets(t2, ngens)
        for j in range(count):
            if first + j < ngens:
                col = int(off[first + j])  # Sq^(2^i) is the first basis element of its degree
                mat[j, k] = (int(vec[col >> 6]) >> (col & 63)) & 1
    return mat


def filtration_one_text(res: Resolution, region: Region) -> str:
    """The reference's `filtration_one` output: `h_i x_(n, s, j) = [v]`, targets with no generators omitted."""
    lines = []
    for pm in product_matrices(res, region):
        if pm.matrix.shape[1] == 0:
            continue
        n, s = pm.source
        for j, row in enumerate(pm.matrix):
            lines.append(f"h_{pm.i} x_({n}, {s}, {j}) = [{', '.join(str(int(v)) for v in row)}]")
    return "".join(line + "\n" for line in lines)
