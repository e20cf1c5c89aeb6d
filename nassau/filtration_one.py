"""Filtration-one products h_i = Sq^(2^i) read straight off a minimal resolution (REFERENCE 6.3).

Because the resolution is minimal, h_i x_j in Ext^{s+1} has coordinate 1 on y_k exactly when
Sq^(2^i) x_j occurs in d(y_k): no lifting is needed, only one bit per (x_j, y_k) pair.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

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


CHART_OPERATIONS = range(4)
"""The h_i a chart draws by default: h_0..h_3, as the reference's charts."""


def operations(res: Resolution, region: Region) -> list[int]:
    """Every i with h_i in the algebra whose degree 2^i fits in the region (all of them over A; fewer over A(n))."""
    cap = res.algebra.profile.max_exponent(0)
    span = max(region.t_limit - res.min_degree, 1)  # the largest degree a product inside the region can have
    return [i for i in range(span.bit_length()) if (1 << i) <= cap]


def product_matrices(res: Resolution, region: Region, ops: Iterable[int] | None = None) -> list[ProductMatrix]:
    """The h_i matrices between bidegrees of the region, in (stem, s, i) order: every h_i (the reference's
    filtration_one), or only those in ops."""
    wanted = operations(res, region) if ops is None else [i for i in operations(res, region) if i in set(ops)]
    out = []
    lo = res.min_degree
    for n in range(lo, region.chart_max_stem + 1):
        for s in range(region.max_s + 1):
            t = n + s
            if not region.contains(s, t) or not res.new_gens.get((s, t)):
                continue
            for i in wanted:
                t2 = t + (1 << i)
                if not region.contains(s + 1, t2):
                    continue
                out.append(ProductMatrix(i, (n, s), (t2 - s - 1, s + 1), _matrix(res, s, t, t2)))
    return out


def h_matrix(res: Resolution, i: int, n: int, s: int) -> np.ndarray:
    """h_i on Ext at (n, s): uint8 (dim there) x (dim at (n + 2^i - 1, s + 1)); both bidegrees must be resolved."""
    t = n + s
    if not res.new_gens.get((s, t)):
        return np.zeros((0, res.new_gens.get((s + 1, t + (1 << i)), 0)), dtype=np.uint8)
    return _matrix(res, s, t, t + (1 << i))


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
