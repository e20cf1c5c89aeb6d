"""The engine's dependency function, tested directly: every input a step reads is among its declared dependencies.

A single thread runs the jobs lowest t first, which finishes far more than a job declares before it runs, and hides
a missing or shifted edge (only two workers, or a cluster, would notice). Here each job runs instead on a fresh
resolution holding exactly what its dependencies guarantee (the job set's closure under them, every other job of
that phase left undone), and what it adds must be what the full run added: a read of anything undeclared finds it
missing and changes the result, or raises. For S_2 by both algorithms (the relaxed wavefront is Nassau's), the cofiber
C4 (its rows from filtration 2 on, after its base phase) and tmf2, a module over A(2)."""
from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

from algebra.module.loader import load_module
from nassau.engine import resolve as engine
from nassau.engine.region import BidegreeST, Region
from nassau.engine.resolution import Resolution

Deps = Callable[[int, int], list[BidegreeST]]


def closure(target: BidegreeST, deps: Deps, jobs: set[BidegreeST]) -> set[BidegreeST]:
    """The jobs target waits on, directly or through others, inside the job set (target itself included)."""
    seen, todo = {target}, [target]
    while todo:
        for d in deps(*todo.pop()):
            if d in jobs and d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def run(name: str, region: Region, algorithm: str, phase: int, monkeypatch: pytest.MonkeyPatch,
        target: BidegreeST | None = None) -> tuple[Resolution, list[BidegreeST]]:
    """Resolve; the run_jobs call number `phase` (the cofiber's rows are its second) runs only target's closure.
    Returns the resolution and the jobs that call was given."""
    real, calls, given = engine.run_jobs, [0], []

    def restricted(jobs, deps, work, threads=1, on_done=None):
        jobs = list(jobs)
        if calls[0] == phase:
            given.extend(jobs)
            if target is not None:
                keep = closure(target, deps, set(jobs))
                jobs = [j for j in jobs if j in keep]
        calls[0] += 1
        return real(jobs, deps, work, threads, on_done)

    monkeypatch.setattr(engine, "run_jobs", restricted)
    res = engine.resolve(load_module(name), region, algorithm)
    monkeypatch.setattr(engine, "run_jobs", real)
    return res, given


@pytest.mark.parametrize("name,algorithm,phase,stem,max_s", [
    ("S_2", "nassau", 0, 12, 6), ("S_2", "standard", 0, 10, 5), ("C4", "standard", 1, 9, 5),
    ("tmf2", "standard", 0, 12, 5)])
def test_each_step_reads_only_what_its_dependencies_finish(name: str, algorithm: str, phase: int, stem: int,
                                                           max_s: int, monkeypatch: pytest.MonkeyPatch) -> None:
    region = Region(max_s=max_s, min_degree=0, max_stem=stem)
    full, jobs = run(name, region, algorithm, phase, monkeypatch)
    assert len(jobs) > 20 and sum(full.dims()[j] for j in jobs) > 5
    for target in jobs:
        res, _ = run(name, region, algorithm, phase, monkeypatch, target)
        skipped = [j for j in jobs if j not in closure(target, engine.dependencies(algorithm), set(jobs))]
        assert not any(res.is_done(*j) for j in skipped), "the closure alone must run"
        got, want = res.added(*target), full.added(*target)
        assert (got.count, got.ncols, got.target_ngens) == (want.count, want.ncols, want.target_ngens), target
        assert np.array_equal(got.rows, want.rows), target
