"""The suspensions Sigma^k M over the unstable algebra, and the suspension maps between their Ext (REFERENCE-UNSTABLE
1.4, 1.5).

Unstable Ext changes with k: Sigma^k M is unstable in more ways as k grows, and in the stable range Ext_U(Sigma^k M)
is the stable Ext of M. `resolve_suspensions` resolves Sigma^k M for k = 0..K, each through the same stem relative to
its bottom (the reference's absolute `Max n` + k). The suspension Ext_U^{s,t-1}(Sigma^{k-1} M) -> Ext_U^{s,t}(Sigma^k M)
is induced by a chain map res(Sigma^k M) -> res(Sigma^{k-1} M) of shift (0, 1) covering the identity of M, as a map
Sigma^k M -> Sigma^{k-1} M lowering degrees by 1 (A-linear, and a map of unstable modules); `suspension_lines`
prints its matrices in the reference's format.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from algebra.module.interface import Module
from algebra.module.loader import module_from_spec
from algebra.module.spec import ModuleSpec
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import UNSTABLE, resolve
from nassau.lifting.chain_map import ChainMap, lift
from nassau.store.save_dir import SaveDir


@dataclasses.dataclass
class Suspension:
    """Sigma^k M resolved over the unstable algebra through absolute stem max_n + k."""

    k: int
    spec: ModuleSpec
    module: Module
    region: Region
    res: Resolution


def suspension_count(module: Module, max_n: int) -> int:
    """The last k the reference draws or maps for a run through absolute stem max_n: max_n - bottom + 2."""
    return max_n - module.min_degree + 2


def resolve_suspensions(spec: ModuleSpec, max_n: int, max_s: int, last_k: int, threads: int = 1,
                        save_dir: str | None = None,
                        on_done: Callable[[int], Callable[[int, int], None] | None] | None = None) -> Iterator[Suspension]:
    """Sigma^k M for k = 0..last_k, each resolved when it is reached (saved in save_dir/suspension{k} if given)."""
    for k in range(last_k + 1):
        spec_k = dataclasses.replace(spec, shift=spec.shift + k)
        module = module_from_spec(spec_k)
        region = Region(max_s=max_s, min_degree=module.min_degree, max_stem=max_n + k)
        store = None
        if save_dir is not None:
            store = SaveDir(Path(save_dir) / f"suspension{k}", spec_k, module, UNSTABLE)
            store.open(region)
        res = resolve(module, region, UNSTABLE, threads, store, on_done(k) if on_done else None)
        yield Suspension(k, spec_k, module, region, res)


def suspension_map(upper: Suspension, lower: Suspension, threads: int = 1) -> ChainMap:
    """The chain map res(Sigma^k M) -> res(Sigma^{k-1} M) over the identity of M, lifted over upper's region (p = 2,
    as every chain map)."""
    lower_module = lower.res.module

    def identity(t: int) -> np.ndarray:
        return np.eye(upper.res.module.dimension(t), lower_module.dimension(t - 1), dtype=np.uint8)

    f = ChainMap.from_module_map(upper.res, lower.res, -1, identity, upper.region, name=f"suspension {upper.k}")
    lift([f], threads=threads)
    return f


def suspension_lines(suspensions: Iterator[Suspension], max_n: int, max_s: int, threads: int = 1) -> Iterator[str]:
    """The reference's unstable_suspension lines: `n s 0: count` for M, then for each k >= 1 and each (n, s) from
    stem max(2 (m + k - 1), m + k) on, `n s k: A` and the matrix (row j = the suspension of class j of Sigma^{k-1} M
    in Sigma^k M's basis) unless it is the identity or a side is empty; n is relative to the shift k."""
    below = None
    for susp in suspensions:
        res, k, m = susp.res, susp.k, susp.module.min_degree - susp.k
        if below is None:
            for n in range(m, max_n + 1):
                for s in range(max_s + 1):
                    yield f"{n} {s} 0: {res.new_gens.get((s, n + s), 0)}"
            below = susp
            continue
        f = suspension_map(susp, below, threads)
        for n in range(max(2 * (m + k - 1), m + k), max_n + k + 1):
            for s in range(max_s + 1):
                t = n + s
                a, b = res.new_gens.get((s, t), 0), below.res.new_gens.get((s, t - 1), 0)
                suffix = ""
                if a and b:
                    matrix = f.hom_k(s, t)
                    if a != b or not np.array_equal(matrix, np.eye(a, dtype=np.uint8)):
                        suffix = " - " + debug_matrix(matrix)
                yield f"{n - k} {s} {k}: {a}{suffix}"
        below = susp


def debug_matrix(matrix: np.ndarray) -> str:
    """A matrix as Rust's Debug prints a Vec of rows: `[[1, 0], [0, 0]]`."""
    return "[" + ", ".join("[" + ", ".join(str(int(v)) for v in row) + "]" for row in matrix) + "]"
