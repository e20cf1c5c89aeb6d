"""The cost model: a run's wall time, peak memory and save directory size, predicted before it runs.

What is exact is computed: dim A_n (nassau.cost.sizes), and from the generators the dimension of every free module
F_s in every degree, which fixes each job's matrices, the rows a save directory holds and what the resolution keeps.
The generators themselves come from the module's probe where it reaches and are predicted beyond it
(nassau.cost.generators). Time is each job's features (its matrices' sizes, F_s(t) and F_{s-1}(t), and its new
generators) weighted by seconds per unit measured on this machine (nassau.cost.calibration), over the workers' speed-
up; memory is the interpreter's measured floor, the Milnor basis, the product tables (their size a measured constant
times the pairs of degrees they can hold, capped by their budget), the resolution's rows and the largest job's
working set. docs/estimate.md has the model, its constants and how well it predicts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from algebra.milnor.product_tables import budget_bytes
from algebra.milnor.profile import FULL
from algebra.module.interface import Module
from algebra.module.spec import ModuleSpec
from fp.threads import cores as machine_cores
from nassau.cost import calibration
from nassau.cost.generators import GeneratorModel
from nassau.cost.jobs import free_grid, job_features
from nassau.cost.memory import format_size
from nassau.cost.sizes import algebra_dims
from nassau.engine.region import Region
from nassau.engine.resolve import resolved_module
from nassau.store.save_dir import SaveDir

#: Bytes of product tables per pair of degrees (e, n) with e + n at most the run's top stem, weighted by
#: dim A_e dim A_n: S_2 through stems 60, 80, 90, 100, 120, 150 (every s) measured 7.3, 8.0, 8.4, 7.1, 8.1, 8.0.
TABLE_BYTES_PER_PAIR = 8.0
#: The Milnor basis's bytes per element (its words twice: by degree and flat), and per generator of the resolution
#: beyond its row's bytes (the row's array, its name, its place in the lists).
BASIS_BYTES = 16.0
#: A sub-Hopf algebra's basis at p = 2 (a change of rings) also builds the whole algebra's through the same degree
#: and an index per element of it into its own (algebra.milnor.basis): tmf2 through stem 150, s <= 75 held 27 MiB so.
INDEX_BYTES = 8.0
GENERATOR_BYTES = 200.0
#: A job's working set in units of the largest matrix d: F_s(t) -> F_{s-1}(t), per worker: the standard step holds the
#: matrix, [A | I] and the kernel it keeps; Nassau's works on one signature's block at a time (S_2 through stems 100,
#: 120, 150: peaks less tables, floor and rows of 55, 14 and 530 MiB (2 workers) against largest matrices of 21, 105
#: and 1212 MiB). A motivic step over A^C builds only the rows' coordinates in the cycle basis and holds them, the
#: kernel it keeps and the one it reads: the sphere through stems 60 and 70, every s, one thread, peaked at 270 and
#: 570 MiB, 39 and 171 MiB beside the rest, against largest matrices of 20 and 84 MiB, through stem 90 on two threads
#: at 4390 MiB, 2776 MiB beside the rest against 1037 (1.34 each); C(tau) through stem 90, s <= 48, 182 MiB beside
#: 44 MiB (its step reduces each weight's block of [A | I] alone).
WORKING_SETS = {"nassau": 0.25, "standard": 2.0, "motivic": 1.6, "tau-quotient": 4.0}
#: Workers' speed-up over one worker, on c cores: 1 + EFFICIENCY (c - 1) (S_2 through stem 120 on 2 cores: threads
#: 1.67x, processes 1.83x; a small run stays on one thread).
EFFICIENCY = {"threads": 0.6, "processes": 0.8}
#: One worker's seconds of work under which more workers give nothing (on 2 cores the crossing of one and two
#: threads lies near 5 s: nassau.cost.choices), so that such a run takes one thread unless its caller names more.
SMALL_RUN_S = 5.0


@dataclass(frozen=True)
class Estimate:
    """A run's predicted cost: each figure with its relative uncertainty (a spread of 0.3 is +-30%)."""

    wall_s: float | None
    wall_spread: float
    peak_bytes: float
    peak_spread: float
    save_bytes: float
    save_spread: float
    generators: float
    tables_bytes: float
    threads: int
    #: Predicted seconds of each job on one worker (what the ETA counts down), or None without time constants.
    job_seconds: dict[tuple[int, int], float] | None = field(default=None, repr=False)
    calibrated_on: str = ""
    #: The workers' speed-up over one that the wall time assumes.
    speedup: float = 1.0
    #: The peak's parts in bytes: the interpreter's floor, the Milnor basis, the product tables, the resolution's
    #: rows, the largest jobs' working sets.
    parts: dict[str, float] = field(default_factory=dict)
    #: Predicted bytes of each job's working set on one worker (what a held run checks before the job can start).
    job_bytes: dict[tuple[int, int], float] | None = field(default=None, repr=False)
    #: Whether the memory budget holds the product tables below what the run would fill.
    tables_capped: bool = False

    def as_json(self) -> dict:
        out = {"wall_s": _round(self.wall_s), "wall_s_spread": self.wall_spread, "peak_bytes": int(self.peak_bytes),
               "peak_bytes_spread": self.peak_spread, "save_bytes": int(self.save_bytes),
               "save_bytes_spread": self.save_spread, "generators": int(round(self.generators)),
               "product_tables_bytes": int(self.tables_bytes), "threads": self.threads}
        out["peak_parts_bytes"] = {k: int(v) for k, v in self.parts.items()}
        if self.calibrated_on:
            out["calibrated_on"] = self.calibrated_on
        return out

    def line(self) -> str:
        wall = "" if self.wall_s is None else f"{_duration(self.wall_s)} (+-{self.wall_spread:.0%}), "
        return (f"{wall}peak {format_size(self.peak_bytes)} (+-{self.peak_spread:.0%}), "
                f"save {format_size(self.save_bytes)} (+-{self.save_spread:.0%}), "
                f"about {self.generators:.0f} generators")


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} days"


def estimate(module: Module, spec: ModuleSpec, region: Region, algorithm: str, threads: int = 1,
             processes: bool = False, tables_budget: float | None = None, timed: bool = True,
             generators: GeneratorModel | None = None, saving: bool = False) -> Estimate:
    """The cost of resolving `module` over `region` by `algorithm` on `threads` workers (processes: worker
    processes). timed: with the wall time (calibrating this machine first if it never was); else memory and size
    only, which need no calibration. tables_budget: the product tables' budget (default: theirs). saving: the run
    writes a save directory (a file per bidegree, synced: about as long as a small job)."""
    over = resolved_module(module, algorithm)
    prime = over.algebra.prime
    gm = generators if generators is not None else calibration.probe(module, spec, algorithm, region)
    span = region.t_limit - region.min_degree
    gens, probed = _generators(gm, region, span)
    dims = algebra_dims(prime, over.profile, span + 1)
    free, below = free_grid(gens, dims, over, region)
    inside = _mask(region, span)
    storage = _row_bytes(below, prime)

    # memory
    machine = calibration.cached_machine(prime, algorithm) if not timed else calibration.machine(prime, algorithm)
    floor = float(machine["floor_bytes"]) if machine else 160e6
    basis = BASIS_BYTES * float(dims.sum())
    if prime == 2 and not over.profile.is_full:
        basis += (BASIS_BYTES + INDEX_BYTES) * float(algebra_dims(prime, FULL, span + 1).sum())
    top = (region.max_stem if region.max_stem is not None else region.max_t) - region.min_degree
    pairs = np.cumsum(np.convolve(dims, dims)[:top + 1])[-1] if top >= 0 else 0.0
    budget = budget_bytes() if tables_budget is None else tables_budget
    tables = min(float(budget), TABLE_BYTES_PER_PAIR * float(pairs))
    rows = float((gens * (storage + GENERATOR_BYTES))[inside].sum())
    share = WORKING_SETS[calibration.kind(prime, algorithm)[1]]
    matrices = _matrix_bytes(free, below, prime)
    matrix = matrices[inside]
    working = share * float(matrix.max(initial=0.0)) * threads
    job_bytes = {(s, t): share * float(matrices[s, t - region.min_degree]) for s, t in region.bidegrees()}
    # each forked worker holds its own interpreter, basis and resolution as it writes them (the tables are shared):
    # S_2 through stem 150 on two processes held 540 MiB in the worker beside 2813 MiB of shared tables
    copies = (threads - 1) * (floor + basis + rows) if processes else 0.0
    peak = floor + basis + tables + rows + working + copies
    parts = {"floor": floor, "basis": basis, "product_tables": tables, "rows": rows, "working": working,
             "worker_copies": copies}
    extrapolated = 1.0 - float(gens[inside & probed].sum()) / max(float(gens[inside].sum()), 1.0)
    peak_spread = 0.1 + 0.1 * extrapolated + 0.15 * (tables + working) / peak

    # save directory
    save = _save_bytes(spec, module, algorithm, gens, below, region, inside, storage)
    save_spread = 0.05 + 0.3 * extrapolated

    wall, wall_spread, per_job, on, gain = None, 0.0, None, "", 1.0
    if machine is not None:
        jobs = region.bidegrees()
        seconds = job_features(gens, dims, over, region, jobs) @ np.array(machine["coefficients"])
        if saving:
            seconds = seconds + float(machine.get("save_s_per_bidegree", 0.0))
        per_job = dict(zip(jobs, seconds.tolist()))
        work = float(seconds.sum())
        gain = speedup(work, threads, processes)
        wall = float(machine["startup_s"]) + work / gain
        job_probed = probed[[s for s, _ in jobs], [t - region.min_degree for _, t in jobs]]
        unseen = 1.0 - float(seconds[job_probed].sum()) / max(work, 1e-9)
        wall_spread = 0.25 + 0.25 * unseen + (0.1 if threads > 1 else 0.0)
        on = f"{machine['calibrated_on']} on {machine['date']}"
    return Estimate(wall, round(wall_spread, 2), peak, round(peak_spread, 2), save, round(save_spread, 2),
                    float(gens[inside].sum()), tables, threads, per_job, on, gain, parts, job_bytes)


def speedup(work: float, threads: int, processes: bool) -> float:
    """What `threads` workers give over one on this machine's cores (a small run stays on one thread)."""
    cores = min(threads, machine_cores())
    if cores <= 1 or work < SMALL_RUN_S:
        return 1.0
    return 1.0 + EFFICIENCY["processes" if processes else "threads"] * (cores - 1)


def _generators(gm: GeneratorModel, region: Region, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Generators per [s, t - bottom] over the region (zero outside it), and where the probe computed them."""
    by_stem = gm.grid(region.max_s, span)
    gens = np.zeros((region.max_s + 1, span + 1))
    probed = np.zeros_like(gens, dtype=bool)
    for s in range(region.max_s + 1):
        gens[s, s:] = by_stem[s, :span + 1 - s]
        probed[s, s:s + gm.probe_stem + 1] = s <= gm.probe_s
    inside = _mask(region, span)
    return np.where(inside, gens, 0.0), probed[:, :span + 1]


def _mask(region: Region, span: int) -> np.ndarray:
    s = np.arange(region.max_s + 1)[:, None]
    t = np.arange(span + 1)[None, :] + region.min_degree
    ends = np.array([region.row_end(k) for k in range(region.max_s + 1)])[:, None]
    return (t >= region.min_degree + s) & (t <= ends)


def _row_bytes(ncols: np.ndarray, prime: int) -> np.ndarray:
    """Bytes of one row of ncols entries as the field stores it: packed 64-bit words at p = 2, a byte each else."""
    return np.ceil(ncols / 64) * 8 if prime == 2 else ncols


def _matrix_bytes(free: np.ndarray, below: np.ndarray, prime: int) -> np.ndarray:
    return free * _row_bytes(below, prime)


def _save_bytes(spec: ModuleSpec, module: Module, algorithm: str, gens: np.ndarray, below: np.ndarray,
                region: Region, inside: np.ndarray, storage: np.ndarray) -> float:
    """A save directory's bytes: one file per bidegree, its header and its rows (SaveDir.file_bytes)."""
    store = SaveDir(".", spec, module, algorithm)
    head = store.file_bytes(0, 0, 0, 0, 0)

    def digits(x: np.ndarray) -> np.ndarray:
        return np.floor(np.log10(np.maximum(x, 1))) + 1

    s = np.arange(gens.shape[0])[:, None] + 0 * gens
    t = np.arange(gens.shape[1])[None, :] + region.min_degree + 0 * gens
    ncols = np.where(gens > 0, below, 0)
    extra = digits(s) + digits(np.abs(t)) + (t < 0) + digits(np.round(gens)) + 2 * digits(ncols) - 5
    return float((head + extra + gens * storage)[inside].sum())
