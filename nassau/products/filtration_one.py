"""Filtration-one products read straight off a minimal resolution (REFERENCE 6.3, REFERENCE-ODD-PRIMES 7.3).

At p = 2 they are h_i = Sq^(2^i); at an odd prime a_0 = Q_0 = beta and h_0 = P^1 (degree q = 2(p - 1)). Because
the resolution is minimal, op x_j in Ext^{s+1} has coordinate c on y_k exactly when c op x_j occurs in d(y_k): no
lifting is needed, one entry per (x_j, y_k) pair. Operation i is h_i at p = 2, and a_0 (i = 0), h_0 (i = 1) at odd
p. Each is the first basis element of its degree, and the last in the unstable order, where it exists on a
generator of degree t only if its excess (its degree) is at most t: elsewhere there is no product at all.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from nassau.engine.region import Region
from nassau.engine.resolution import Resolution


@dataclass(frozen=True)
class ProductMatrix:
    """h_i on one bidegree: matrix[j][k] is the coefficient of y_k (target basis) in h_i x_j."""

    i: int
    source: tuple[int, int]  # (n, s)
    target: tuple[int, int]
    matrix: np.ndarray  # uint8 (source dim, target dim)


CHART_OPERATIONS = range(4)
"""The h_i a chart draws by default: h_0..h_3, as the reference's charts."""


ODD_OPERATIONS = ("a_0", "h_0")


def op_degree(res: Resolution, i: int) -> int:
    """The internal degree of operation i: 2^i at p = 2; 1 (a_0) or q (h_0) at odd p."""
    p = res.algebra.prime
    return 1 << i if p == 2 else (1, 2 * (p - 1))[i]


def op_name(res: Resolution, i: int) -> str:
    """The reference's name of operation i: h_i, or a_0 / h_0 at odd p."""
    return f"h_{i}" if res.algebra.prime == 2 else ODD_OPERATIONS[i]


def chart_operations(res: Resolution) -> dict[str, tuple[int, tuple[int, int]]]:
    """What a chart draws by default: name -> (operation i, (dn, ds)): h0..h3, or a0 and h0 at odd p."""
    ops = CHART_OPERATIONS if res.algebra.prime == 2 else range(len(ODD_OPERATIONS))
    return {op_name(res, i).replace("_", ""): (i, (op_degree(res, i) - 1, 1)) for i in ops}


def op_element(res: Resolution, i: int) -> object:
    """Operation i as an algebra element: Sq(2^i) at p = 2; Q_0 or P(1) at odd p."""
    return (1 << i,) if res.algebra.prime == 2 else [(1, ()), (0, (1,))][i]


def operation_of(res: Resolution, n: int, s: int, vector: tuple[int, ...]) -> int | None:
    """i when the class n,s,[v] is a nonzero multiple v_0 op_i of filtration-one operation i of the algebra (h_i at
    p = 2; a_0, h_0 at odd p), else None: then its products are read off d (h_matrix) instead of lifted."""
    if s != 1 or len(vector) != 1 or not vector[0]:
        return None
    count = max(n + 1, 1).bit_length() if res.algebra.prime == 2 else len(ODD_OPERATIONS)
    for i in range(count):
        if op_degree(res, i) == n + 1 and res.algebra.contains(op_element(res, i)):
            return i
    return None


def op_column(res: Resolution, s: int, t: int, i: int) -> int | None:
    """Where operation i sits in the block of a generator of F_s of degree t (in degree t + its degree): 0 over A;
    its unstable position, or None where that block lacks it (excess > t), over the unstable algebra; None over a
    subalgebra without it."""
    if not res.algebra.contains(op_element(res, i)):
        return None
    index = res.algebra.index(op_element(res, i))
    fs = res.free(s)
    first = fs.gens_below(t)
    off = fs.offsets(t + op_degree(res, i), first + 1)
    return index if int(off[first + 1] - off[first]) > index else None


def operations(res: Resolution, region: Region) -> list[int]:
    """Every operation in the algebra whose degree fits in the region: h_i over A, fewer over A(n); a_0 and
    h_0 at odd p where the profile has Q_0 and P(1)."""
    alg = res.algebra
    if alg.prime != 2:
        return [i for i, elem in enumerate([(1, ()), (0, (1,))]) if alg.contains(elem)]
    cap = alg.profile.max_exponent(0)
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
                t2 = t + op_degree(res, i)
                col = op_column(res, s, t, i)
                if not region.contains(s + 1, t2) or col is None:
                    continue
                out.append(ProductMatrix(i, (n, s), (t2 - s - 1, s + 1), _matrix(res, s, t, t2, col)))
    return out


def h_matrix(res: Resolution, i: int, n: int, s: int) -> np.ndarray:
    """Operation i on Ext at (n, s): uint8 (dim there) x (dim one operation up); both bidegrees must be resolved."""
    t = n + s
    t2 = t + op_degree(res, i)
    col = op_column(res, s, t, i) if res.new_gens.get((s, t)) else None
    if col is None:
        return np.zeros((res.new_gens.get((s, t), 0), res.new_gens.get((s + 1, t2), 0)), dtype=np.uint8)
    return _matrix(res, s, t, t2, col)


def _matrix(res: Resolution, s: int, t: int, t2: int, op_col: int) -> np.ndarray:
    fs = res.free(s)
    first = fs.gens_below(t)
    count = res.new_gens[(s, t)]
    targets = res.free(s + 1)
    ys = range(targets.gens_below(t2), targets.gens_below(t2 + 1))
    mat = np.zeros((count, len(ys)), dtype=np.uint8)
    d = res.differential(s + 1)
    packed = res.field.p == 2
    for k, y in enumerate(ys):
        vec, ngens = d.output(y)
        off = fs.offsets(t2, ngens)
        for j in range(count):
            if first + j < ngens:
                col = int(off[first + j]) + op_col
                mat[j, k] = (int(vec[col >> 6]) >> (col & 63)) & 1 if packed else vec[col]
    return mat


def filtration_one_text(res: Resolution, region: Region) -> str:
    """The reference's `filtration_one` output: `h_i x_(n, s, j) = [v]`, targets with no generators omitted
    (at odd p, where the reference has no such example, the same lines for a_0 and h_0)."""
    lines = []
    for pm in product_matrices(res, region):
        if pm.matrix.shape[1] == 0:
            continue
        n, s = pm.source
        for j, row in enumerate(pm.matrix):
            lines.append(f"{op_name(res, pm.i)} x_({n}, {s}, {j}) = [{', '.join(str(int(v)) for v in row)}]")
    return "".join(line + "\n" for line in lines)
