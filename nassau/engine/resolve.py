"""Resolve a module over a region: pick the algorithm, load what a save directory holds, run the rest.

The dependency graph is the algorithm's: the standard step (s, t) needs (s, t-1) and (s-1, t); Nassau's
steps for s >= 2 need only (s, t-1) and (s-1, t-1) (REFERENCE 5.5), because they read the generators
below t of F_{s-1} and below t-1 of F_{s-2}, which those two bidegrees complete.
"""
from __future__ import annotations

from typing import Callable, Protocol

from algebra.module.interface import Module
from algebra.unstable.module import UnstableModule, check_unstable
from gpu import trace
from nassau.engine.cofiber import CofiberSpec, Truncation, share_below
from nassau.engine.errors import EngineError
from nassau.engine.nassau_step import nassau_qualifies, standard_at, step_nassau
from nassau.engine.processes import run_processes
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.scheduler import run_jobs
from nassau.engine.standard import step_standard

CHANGE_OF_RINGS = "change-of-rings"
ALGORITHMS = ("auto", "standard", "nassau", CHANGE_OF_RINGS)
#: Not an algorithm but what the run resolves over: the standard step on free unstable modules (Ext_U(M)).
UNSTABLE = "unstable"


class Store(Protocol):
    def load_into(self, res: Resolution) -> int: ...
    def save(self, res: Resolution, s: int, t: int) -> None: ...


def choose_algorithm(module: Module, requested: str) -> str:
    """`auto` takes the change of rings for A//B, else Nassau's algorithm wherever it applies, else the
    standard one."""
    if requested not in ALGORITHMS:
        raise EngineError(f"unknown algorithm {requested!r} (choose from {', '.join(ALGORITHMS)})")
    quotient = getattr(module, "subalgebra", None)
    if requested == CHANGE_OF_RINGS and quotient is None:
        raise EngineError(f"the change of rings does not apply to {module.name}: it is not A//B for a sub-Hopf "
                          "algebra B = A(n) (one generator, relations Sq1, Sq2, ..., Sq(2^n))")
    if requested == "auto" and quotient is not None:
        return CHANGE_OF_RINGS
    reason = nassau_qualifies(module)
    if requested == "nassau" and reason:
        raise EngineError(f"Nassau's algorithm does not apply to {module.name}: {reason}; use --algorithm standard")
    if requested == "auto":
        return "standard" if reason else "nassau"
    return requested


def algorithm_over_module(module: Module, requested: str) -> str:
    """The algorithm for a resolution of M itself, which lifts into it and d2 need: as choose_algorithm, but where
    that gives the change of rings (a resolution of F2 over B, whose products would be Ext_B's) the standard one."""
    chosen = choose_algorithm(module, requested)
    return "standard" if chosen == CHANGE_OF_RINGS else chosen


def resolved_module(module: Module, algorithm: str) -> Module:
    """What the resolution is of: M itself, for the change of rings F2 over B (Ext_A(A//B) = Ext_B(F2)), or M over
    the unstable algebra."""
    if algorithm == UNSTABLE:
        return UnstableModule(module)
    return module.over_subalgebra() if algorithm == CHANGE_OF_RINGS else module


def dependencies(algorithm: str) -> Callable[[int, int], list[tuple[int, int]]]:
    def strict(s: int, t: int) -> list[tuple[int, int]]:
        return [(s, t - 1), (s - 1, t)]

    def relaxed(s: int, t: int) -> list[tuple[int, int]]:
        return strict(s, t) if s <= 1 else [(s, t - 1), (s - 1, t - 1)]

    return relaxed if algorithm == "nassau" else strict


class Executor(Protocol):
    """Runs the jobs somewhere else than this process's threads (nassau.store.cluster): each job calls compute() on a
    resolution of its own, reading its inputs from the store and writing its output file there."""

    def run(self, jobs: list[tuple[int, int]], deps: Callable[[int, int], list[tuple[int, int]]], region: Region,
            algorithm: str, store: Store, on_done: Callable[[int, int], None] | None) -> None: ...


def check_executor(module: Module, region: Region, algorithm: str) -> None:
    """EngineError unless an executor can run this resolution: not a cofiber's two-phase one, which stays on one
    machine."""
    cofiber = None if algorithm == UNSTABLE else CofiberSpec.read(module)
    if cofiber is not None and region.max_s >= cofiber.s:
        raise EngineError(f"{module.name} is a cofiber, resolved in two phases on this machine only; run it without "
                          "--cluster or --workers")


def compute(res: Resolution, region: Region, algorithm: str, s: int, t: int, store: Store | None = None) -> None:
    """The job (s, t), the same on a thread and on a cluster worker: one step of the algorithm, then its file.

    The kernel ker d_s is kept for (s + 1, t) when that job is still to come; a job that finds no kernel kept
    recomputes it (standard.kernel_of), so results do not depend on where the jobs ran."""
    with trace.working_on(s, t):
        step(res, algorithm, s, t, keep=region.contains(s + 1, t) and not res.is_done(s + 1, t))
    if store is not None:
        store.save(res, s, t)


def step(res: Resolution, algorithm: str, s: int, t: int, keep: bool = True) -> None:
    """One step of the algorithm at (s, t); keep: ker d_s may be read at (s + 1, t), so keep it where that step
    reads it. Nassau's steps at s >= 2 read no kernels; its s = 1 step still needs ker epsilon, and its standard
    steps (odd p, no B but F_p) ker d_{s-1}. Every other algorithm (standard, change of rings, unstable) reads
    ker d_s at (s + 1, t)."""
    if algorithm != "nassau":
        step_standard(res, s, t, keep_kernel=keep)
    elif s >= 2 and not standard_at(res.module, s, t):
        step_nassau(res, s, t)
    else:  # rows 0 and 1, and where Nassau's run takes the standard step (nassau_step.standard_at)
        step_standard(res, s, t, keep_kernel=keep and (s == 0 or standard_at(res.module, s + 1, t)), relaxed=s >= 2)


def resolve(module: Module, region: Region, algorithm: str = "standard", threads: int = 1,
            store: Store | None = None, on_done: Callable[[int, int], None] | None = None,
            res: Resolution | None = None, executor: Executor | None = None, processes: bool = False,
            on_loaded: Callable[[Resolution], None] | None = None) -> Resolution:
    """Compute every bidegree of the region not already present; returns the resolution. An unstable run first
    checks that the module is unstable through the region (ModuleError names what breaks it). on_loaded(res) is
    called once what the store held is loaded, before any job runs.

    processes: the `threads` workers are processes of this machine (nassau.engine.processes), not threads. With
    an executor the jobs run there, writing into the store, and the resolution returned is loaded from it."""
    if executor is not None:
        check_executor(module, region, algorithm)
    cofiber = None if algorithm == UNSTABLE else CofiberSpec.read(module)
    if cofiber is not None and region.max_s >= cofiber.s:
        return _resolve_cofiber(module, cofiber, region, threads, store, on_done)
    module = resolved_module(module, algorithm)
    if algorithm == UNSTABLE:
        check_unstable(module, region.t_limit)
    res = Resolution(module, algorithm) if res is None else res
    res.algebra.extend(region.t_limit - module.min_degree + 1)
    if store is not None:
        store.load_into(res)
        if on_loaded is not None:
            on_loaded(res)

    jobs = [b for b in region.bidegrees() if not res.is_done(*b)]
    if executor is None and processes and threads > 1:

        def done(s: int, t: int) -> None:  # here, once a worker's result is added to res
            if store is not None:
                store.save(res, s, t)
            if on_done is not None:
                on_done(s, t)

        run_processes(res, jobs, dependencies(algorithm), lambda s, t: compute(res, region, algorithm, s, t), threads,
                      done)
    elif executor is None:
        run_jobs(jobs, dependencies(algorithm), lambda s, t: compute(res, region, algorithm, s, t, store), threads,
                 on_done)
    elif jobs:
        if store is None:
            raise EngineError("jobs run elsewhere read and write a save directory; give one")
        executor.run(jobs, dependencies(algorithm), region, algorithm, store, on_done)
        store.load_into(res)
    return res


def _resolve_cofiber(module: Module, spec: CofiberSpec, region: Region, threads: int, store: Store | None,
                     on_done: Callable[[int, int], None] | None) -> Resolution:
    """M's resolution through filtration S + 1, then the cofiber's own from filtration S (nassau.engine.cofiber).

    Only the shared rows s < S and the cofiber's rows are saved, the shared ones once the class has passed its
    checks; M's rows S and S + 1 are recomputed on every run."""
    # M's own rows by Nassau's algorithm where it applies to M (finite, p = 2, over A), as a run of M would.
    base_algorithm = "standard" if nassau_qualifies(module, as_cofiber=False) else "nassau"
    base = Resolution(module, base_algorithm)
    jobs = spec.base_jobs(module, region)
    base.algebra.extend(max(t for _, t in jobs) - module.min_degree + 1)
    if store is not None:
        store.load_into(base, below=spec.s)

    def base_work(s: int, t: int) -> None:
        with trace.working_on(s, t):
            step(base, base_algorithm, s, t)

    def base_done(s: int, t: int) -> None:
        if on_done is not None and s < spec.s and region.contains(s, t):
            on_done(s, t)

    todo = [b for b in jobs if not base.is_done(*b)]
    run_jobs(todo, dependencies(base_algorithm), base_work, threads, base_done)
    cut = Truncation(base, spec)
    cut.check_cocycle()
    if store is not None:  # only now: a class that is not a cocycle leaves nothing behind
        for s, t in todo:
            if s < spec.s:
                store.save(base, s, t)
    res = share_below(base, cut)
    if store is not None:
        store.load_into(res)

    def work(s: int, t: int) -> None:
        with trace.working_on(s, t):
            step_standard(res, s, t, keep_kernel=region.contains(s + 1, t))
        if store is not None:
            store.save(res, s, t)

    rows = [b for b in region.bidegrees() if b[0] >= spec.s and not res.is_done(*b)]
    run_jobs(rows, dependencies("standard"), work, threads, on_done)
    return res
