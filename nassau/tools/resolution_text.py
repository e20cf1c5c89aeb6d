"""The reference's plain-text dumps of a resolution and of the algebra (REFERENCE-UNSTABLE 2, 3), byte for byte.

- `differentials`: `d x_(n,s,i) = P(1) x_(n',s',k) + ...` for every generator, in stem order: the free-module element
  d(x) with its terms in basis order (generator, then algebra basis index); `0` at s = 0.
- `num_gens`: `n,s,count` for every bidegree of the region in stem order, zeros included.
- `resolution_size`: from the top filtration down, the vector-space dimension of F_s(t) for each t of row s, each
  followed by `, ` (the size of what a run holds, not of Ext).
- `algebra_dim`: `dim A_n = d` for n = 0..N.
"""
from __future__ import annotations

from collections.abc import Iterator

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.profile import FULL
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution


def stem_order(res: Resolution, region: Region) -> Iterator[tuple[int, int]]:
    """(n, s) of the region in the reference's `iter_stem` order: stem ascending, then filtration."""
    for n in range(res.min_degree, region.chart_max_stem + 1):
        for s in range(region.max_s + 1):
            if region.contains(s, n + s):
                yield n, s


def differentials_text(res: Resolution, region: Region) -> str:
    lines = []
    for n, s in stem_order(res, region):
        t = n + s
        fs = res.free(s)
        for g in range(fs.gens_below(t), fs.gens_below(t + 1)):
            if s == 0:
                value = "0"
            else:
                vec, ngens = res.differential(s).output(g)
                value = res.free(s - 1).element_string(t, vec, ngens)
            lines.append(f"d {fs.gen_names[g]} = {value}\n")
    return "".join(lines)


def num_gens_text(res: Resolution, region: Region) -> str:
    return "".join(f"{n},{s},{res.new_gens.get((s, n + s), 0)}\n" for n, s in stem_order(res, region))


def resolution_size_text(res: Resolution, region: Region) -> str:
    rows = []
    for s in range(region.max_s, -1, -1):
        fs = res.free(s)
        rows.append("".join(f"{fs.dimension(t)}, " for t in range(res.min_degree + s, region.row_end(s) + 1)) + "\n")
    return "".join(rows)


def algebra_dim_text(max_degree: int, prime: int = 2) -> str:
    basis = MilnorBasis(FULL) if prime == 2 else OddMilnorBasis(prime, FULL)
    return "".join(f"dim A_{n} = {basis.dimension(n)}\n" for n in range(max_degree + 1))
