"""Algebraic Mahowald (root) invariants through the projective spaces M_k = H^*(RP_{-k}^inf) (REFERENCE-UNSTABLE 5).

Ext(F2) is the limit of Ext^{s,t-1}(M_k) along the (-1)-cell. For x in Ext^{s,t}(F2) its image in Ext^{s,t-1}(M_k)
is zero for small k; at the least k where it is not, it comes from the bottom cell Ext^{s,t-1+k}(F2) -> Ext^{s,t-1}
(M_k), and any preimage, in stem n + k - 1, is the invariant M(x), well defined modulo the kernel of that map. Both
cells are classes of Ext(M_k) with values in F2 (the degree -1 class is hit by no square, so M_k -> Sigma^-1 F2 is
A-linear), so both maps are chain maps res(M_k) -> res(F2) lifted from a class: the chain-map engine as for
products. As in the reference, a class is printed at the first k where its image is nonzero and lies in the image
of the bottom cell: the preimage is the RREF quasi-inverse of [B | I], the indeterminacy the RREF kernel.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from algebra.module.interface import Module
from algebra.module.loader import load_module, module_from_spec
from algebra.module.spec import ModuleSpec
from fp import Subspace, from_bool, reduced_with_identity, to_bool
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import resolve
from nassau.lifting.chain_map import ChainMap, lift
from nassau.tools.resolution_text import stem_order

HEADER = "M({basis element}) = {mahowald_invariant}[ mod {indeterminacy}]"


def projective_space(k: int) -> Module:
    """M_k = H^*(RP_{-k}^inf), as the reference's JSON defines it."""
    data = {"p": 2, "type": "real projective space", "min": -k}
    return module_from_spec(ModuleSpec(name=f"RP_-{k}_inf", shift=0, path=Path(f"RP_-{k}_inf"), data=data))


def sphere_region(max_k: int) -> Region:
    return Region(max_s=max_k // 2 + 1, min_degree=0, max_stem=2 * max_k - 2)


def mahowald_lines(max_k: int, threads: int = 1, on_done: Callable[[int, int], None] | None = None,
                   on_k: Callable[[int], None] | None = None) -> Iterator[str]:
    """The header, then `M(x_(n, s, i)) = ...` for every class found with k <= max_k, in the reference's order (F2
    resolved by the standard algorithm, as the reference does: the printed vectors are in its Ext basis).
    on_done(s, t) as each bidegree of F2 is resolved; on_k(k) as the work for M_k begins."""
    yield HEADER
    region = sphere_region(max_k)
    sphere = resolve(load_module("S_2"), region, "standard", threads, on_done=on_done)
    for k in range(1, max_k + 1):
        if on_k is not None:
            on_k(k)
        yield from _lines_for(sphere, region, k, threads)


def _lines_for(sphere: Resolution, region: Region, k: int, threads: int) -> Iterator[str]:
    module = projective_space(k)
    mk_region = Region(max_s=k // 2 + 1, min_degree=-k, max_stem=k - 2)
    mk = resolve(module, mk_region, "standard", threads)
    bottom = ChainMap.from_class(mk, sphere, -k, 0, np.ones(1, dtype=np.uint8), mk_region, name="the bottom cell")
    minus_one = ChainMap.from_class(mk, sphere, -1, 0, np.ones(1, dtype=np.uint8), mk_region,
                                    name="the (-1)-cell")
    lift([bottom, minus_one], threads=threads)
    for n, s in stem_order(sphere, region):
        t = n + s
        if not mk_region.contains(s, t - 1):
            continue
        p, a_bot, a_b = mk.new_gens.get((s, t - 1), 0), sphere.new_gens.get((s, t - 1 + k), 0), sphere.new_gens[(s, t)]
        if not (p and a_bot and a_b):
            continue
        b = bottom.hom_k(s, t - 1)  # a_bot x p: row j = the image of x_(n+k-1, s, j) in Ext(M_k)
        aug, pivots = reduced_with_identity(from_bool(b.astype(bool)), p)
        rank = int((pivots < p).sum())
        if rank == 0:
            continue
        image = Subspace.from_rref(aug.image(pivots, 0, 1), pivots[:rank], p)
        preimage, kernel = aug.quasi_inverse(pivots, 0, 1), aug.kernel(pivots, 1)
        mod = ""
        if kernel.dim:
            mod = " mod <" + ", ".join(_sum(row, n + k - 1, s) for row in to_bool(kernel.basis, a_bot)) + ">"
        for i, v in enumerate(minus_one.hom_k(s, t - 1)):  # row i = the image of x_(n, s, i) in Ext(M_k)
            packed = from_bool(v[None, :].astype(bool))
            if v.any() and image.contains(packed):
                yield f"M(x_({n}, {s}, {i})) = {_sum(to_bool(preimage.apply(packed), a_bot)[0], n + k - 1, s)}{mod}"


def _sum(coefficients: np.ndarray, n: int, s: int) -> str:
    """`x_(n, s, j) + ...` over the nonzero coordinates (the reference's spaced generator names)."""
    return " + ".join(f"x_({n}, {s}, {j})" for j in np.nonzero(coefficients)[0])
