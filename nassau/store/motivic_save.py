"""Save and resume a motivic run: the save directory (nassau.store.save_dir) with algorithm "motivic", so classical
runs and motivic ones refuse each other's directories in one line, and two kinds of files beside the bidegrees:

- `weights/{s}_{t}.bin`: the new generators' weights (one word each), written before the bidegree's own file, so a
  bidegree that is there has its weights;
- `cycles/{s}_{t}.bin`, `cycle_meta/` and `cycle_blocks/`: ker d_s in degree t as the next step reads it, factored
  as the step found it (nassau.engine.motivic.FactoredCycles: its rows' coordinates in the cycle basis below, each
  vector's weight and pivot, the blocks' rows and solvers), kept only while (s + 1, t) is still to come and deleted
  once it is saved. A directory saved before kernels were kept factored holds their vectors over F_s's basis in
  `cycles/` (no `cycle_blocks/`), which is read as such. A run resumed over a larger region, or a kernel's files
  lost, recomputes it from the generators (kernel_cycles).

A run with M_2/tau coefficients over A^C/tau (nassau.engine.tau_quotient) writes its directory with that engine's
algorithm name, so that neither kind resumes the other's, and keeps no kernels: a resumed run computes the ones it
reads again.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from algebra.module.motivic import CTAU, MotivicModule
from algebra.module.spec import ModuleSpec, read_spec
from nassau.engine.motivic import Cycles, FactoredCycles, MotivicResolution, kernel_cycles
from nassau.engine.region import Region
from nassau.store.save_dir import SaveDir, StoreError

ALGORITHM = "motivic"


def motivic_spec(module_name: str, motivic: MotivicModule) -> ModuleSpec:
    """The definition a motivic run of `module_name` is of: Ctau's is the sphere's, named as the user named it."""
    if motivic.module.name == CTAU:
        return replace(read_spec("S_2"), name=CTAU)
    return read_spec(module_name)


class MotivicSave:
    def __init__(self, path: Path, module_name: str, motivic: MotivicModule, region: Region | None,
                 algorithm: str | None = None, spec: ModuleSpec | None = None, worker: bool = False) -> None:
        """spec: the definition, where not the one module_name reads; worker: a cluster worker's, on the directory
        its client checked and holds (the definition from its manifest)."""
        spec = motivic_spec(module_name, motivic) if spec is None else spec
        self.cycles = algorithm is None or algorithm == ALGORITHM  # over A^C, whose steps read the kernels kept
        self.store = SaveDir(Path(path), spec, motivic.module, ALGORITHM if algorithm is None else algorithm)
        if not worker:
            self.store.open(region)

    def save(self, res: MotivicResolution, s: int, t: int, kept: FactoredCycles | None) -> None:
        """(s, t)'s weights and kept kernel first (the kernel: save_kernel, which a worker process calls itself
        where it keeps it, before its record reaches the process saving the rest), then its bidegree file; and
        (s - 1, t)'s kernel is no longer needed."""
        self.save_kernel(res, s, t, kept)
        fs = res.free(s)
        first, last = fs.gens_below(t), fs.gens_below(t + 1)
        weights = np.array(res.weights[s][first:last], dtype=np.int64).view(np.uint64).reshape(-1, 1)
        self.store.save_map_rows("weights", s, t, weights, 64, 0)
        self.store.save(res, s, t)
        if s > 0:
            for kind in ("cycles", "cycle_meta", "cycle_blocks"):
                (self.store.path / kind / f"{s - 1}_{t}.bin").unlink(missing_ok=True)

    def save_kernel(self, res: MotivicResolution, s: int, t: int, kept: FactoredCycles | None) -> None:
        """The kernel (s, t) keeps for (s + 1, t), factored as the step found it (none: nothing): its rows'
        coordinates, each vector's weight and pivot, and its blocks' solvers. Not its vectors over F_s's basis,
        which would be the elimination the factored kernel spares (the sphere through stem 60, every s, saved on
        one core: 42.9 s of CPU written so, 25.0 s factored; docs/motivic.md)."""
        if kept is None:
            return
        self.store.save_map_rows("cycle_blocks", s, t, _flat_blocks(kept).view(np.uint64).reshape(-1, 1), 64, 0)
        meta = np.stack([kept.weights, kept.pivots], axis=1).astype(np.int64).view(np.uint64)
        self.store.save_map_rows("cycle_meta", s, t, meta, 128, 0)
        self.store.save_map_rows("cycles", s, t, kept.coords, kept.ncoords, 0)

    def load_into(self, res: MotivicResolution, region: Region) -> int:
        """Every saved bidegree that extends what is loaded, with its weights, and the kernels the rest of the region
        reads (saved, or recomputed); returns how many bidegrees were loaded."""
        loaded = self.store.load_into(res)
        self._weights(res, list(res.new_gens))
        for (s, t) in list(res.new_gens) if self.cycles else ():
            if region.contains(s + 1, t) and not res.is_done(s + 1, t):
                res.cycles[(s, t)] = self._cycles(res, s, t)
        return loaded

    def catch_up(self, res: MotivicResolution, bidegrees: list[tuple[int, int]]) -> None:
        """Load these bidegrees where saved (a cluster worker catching up on other workers' files), with their
        weights; no kernels (kernel_for reads the one a step needs)."""
        self.store.load_into(res, bidegrees=bidegrees)
        self._weights(res, [b for b in bidegrees if res.is_done(*b)])

    def kernel_for(self, res: MotivicResolution, s: int, t: int) -> None:
        """Make sure the kernel (s - 1, t) that the step (s, t) over A^C reads is here: kept by this process, or
        saved by the one that ran (s - 1, t) (a cluster worker), or else computed again; the same basis each way."""
        if s > 0 and (s - 1, t) not in res.cycles:
            res.cycles[(s - 1, t)] = self._cycles(res, s - 1, t)

    def _weights(self, res: MotivicResolution, bidegrees: list[tuple[int, int]]) -> None:
        """The weights of the generators of these bidegrees (done) that have none yet, in each row's order."""
        rows: dict[int, list[int]] = {}
        for s, t in bidegrees:
            rows.setdefault(s, []).append(t)
        for s in sorted(rows):
            held = len(res.gen_weights(s))
            fs = res.free(s)
            for t in sorted(rows[s]):
                first, last = fs.gens_below(t), fs.gens_below(t + 1)
                if last <= held:
                    continue
                saved = self.store.map_rows("weights", s, t)
                if saved is None or len(saved[0]) != last - first or first != held:
                    raise StoreError(f"{self.store.path} lacks the weights of (s={s}, t={t}); refusing to use it "
                                     "(choose another --save-dir)")
                res.weights[s].extend(int(w) for w in saved[0].view(np.int64).ravel())
                held = last

    def _cycles(self, res: MotivicResolution, s: int, t: int) -> Cycles | FactoredCycles:
        """The kernel (s, t) saved: factored (save_kernel), or as its vectors over F_s's basis (a directory saved
        before kernels were kept factored); computed again if neither is there whole."""
        basis = self.store.map_rows("cycles", s, t)
        meta = self.store.map_rows("cycle_meta", s, t)
        if basis is None or meta is None:
            return kernel_cycles(res, s, t)
        blocks = self.store.map_rows("cycle_blocks", s, t)
        pairs = meta[0].view(np.int64).reshape(-1, 2)
        weights, pivots = pairs[:, 0].copy(), pairs[:, 1].copy()
        if blocks is not None:
            kept = _factored(blocks[0].view(np.int64).ravel(), basis[0], weights, pivots)
            fs = res.free(s)  # its coordinates are of F_s's basis over the generators below t
            return kept if kept.coords.shape[0] == fs.dimension(t, fs.gens_below(t)) else kernel_cycles(res, s, t)
        if len(basis[0]) != len(pivots):
            return kernel_cycles(res, s, t)
        return Cycles(basis[0], weights, pivots, np.arange(res.free(s).dimension(t), dtype=np.int64))

    def close(self) -> None:
        self.store.close()


def _flat_blocks(kept: FactoredCycles) -> np.ndarray:
    """What a factored kernel holds beside its coordinates, weights and pivots, as one int64 vector: the number of
    coordinates, the new generators' coordinates, then per block its rows Q, its coordinates and its solver (rows,
    words, the words)."""
    parts = [np.array([kept.ncoords, len(kept.new)]), kept.new, np.array([len(kept.blocks)])]
    for q, here, solver in kept.blocks:
        parts += [np.array([len(q), len(here)]), q, here, np.array(solver.shape), solver.ravel().view(np.int64)]
    return np.concatenate([np.asarray(p, dtype=np.int64) for p in parts])


def _factored(flat: np.ndarray, coords: np.ndarray, weights: np.ndarray, pivots: np.ndarray) -> FactoredCycles:
    """_flat_blocks read back into the kernel it was made of."""
    at = 0

    def take(n: int) -> np.ndarray:
        nonlocal at
        at += n
        return flat[at - n:at].copy()

    ncoords, nnew = (int(x) for x in take(2))
    new = take(nnew)
    blocks = []
    for _ in range(int(take(1)[0])):
        nq, nhere = (int(x) for x in take(2))
        q, here = take(nq), take(nhere)
        rows, nwords = (int(x) for x in take(2))
        blocks.append((q, here, take(rows * nwords).view(np.uint64).reshape(rows, nwords)))
    return FactoredCycles(weights, pivots, np.ascontiguousarray(coords), tuple(blocks), new, ncoords)
