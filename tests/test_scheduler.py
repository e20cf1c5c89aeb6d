"""run_jobs on its own: random dependency graphs on 1 to 4 workers, every job once and after its dependencies,
K workers busy at once, an error stops the run and reaches the caller, and a run that cannot finish says so."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from numba.core import event

from nassau.engine.scheduler import SHARE_AFTER, JobFailed, run_jobs

TIMEOUT = 20


def finishes(*args, **kwargs) -> None:
    """run_jobs(*args, **kwargs) on a watched thread: a stall fails the test instead of hanging it."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            run_jobs(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - raised in the test below
            errors.append(exc)

    watched = threading.Thread(target=run, daemon=True)
    watched.start()
    watched.join(TIMEOUT)
    assert not watched.is_alive(), "run_jobs did not return: the scheduler stalled"
    if errors:
        raise errors[0]


def random_dag(rng: np.random.Generator) -> tuple[list[tuple[int, int]], dict]:
    """Jobs (s, t) in a random order, each depending on some earlier ones and on jobs outside the set (ignored)."""
    cells = rng.permutation(64)[: int(rng.integers(1, 40))]
    jobs = [(int(c) // 8, int(c) % 8) for c in cells]  # their (t, s) order is unrelated to the dependency order
    deps = {}
    for k, job in enumerate(jobs):
        earlier = [jobs[j] for j in rng.choice(k, size=min(k, int(rng.integers(0, 4))), replace=False)] if k else []
        deps[job] = earlier + [(100 + k, 0)]
    return jobs, deps


def run_and_check(jobs: list[tuple[int, int]], deps: dict, threads: int, rng: np.random.Generator) -> None:
    """Run the graph; every job once, never before one of its dependencies inside the set has finished."""
    guard = threading.Lock()
    done: list = []
    early: list = []
    reported: list = []

    def work(s: int, t: int) -> None:
        with guard:
            early.extend((s, t, d) for d in deps[(s, t)] if d in deps and d not in done)
        time.sleep(float(rng.random()) * 1e-4)  # vary the interleaving
        with guard:
            done.append((s, t))

    def on_done(s: int, t: int) -> None:
        with guard:
            reported.append((s, t))

    finishes(jobs, lambda s, t: deps[(s, t)], work, threads, on_done)
    assert early == [], "jobs started before their dependencies finished"
    assert sorted(done) == sorted(jobs) == sorted(reported)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_every_job_runs_once_after_its_dependencies(threads: int, rng: np.random.Generator) -> None:
    for _ in range(25):
        run_and_check(*random_dag(rng), threads, rng)


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_k_workers_run_k_jobs_at_once(threads: int) -> None:
    """Each job waits at a barrier until K jobs are running: it passes only if K workers run them together."""
    barrier = threading.Barrier(threads, timeout=TIMEOUT / 2)
    finishes([(0, t) for t in range(2 * threads)], lambda s, t: [], lambda s, t: barrier.wait(), threads)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_an_error_stops_the_run_and_reaches_the_caller(threads: int) -> None:
    jobs = [(s, t) for s in range(4) for t in range(6)]
    ran: list = []

    def work(s: int, t: int) -> None:
        if (s, t) == (1, 2):
            raise ValueError("boom")
        ran.append((s, t))

    with pytest.raises((ValueError, JobFailed)) as info:
        finishes(jobs, lambda s, t: [(s, t - 1), (s - 1, t)], work, threads)
    error = info.value if isinstance(info.value, ValueError) else info.value.__cause__
    assert isinstance(error, ValueError) and str(error) == "boom"
    assert not [(s, t) for s, t in ran if s >= 1 and t >= 2], "a job that needs the failed one ran"


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_a_cycle_is_reported_not_waited_on(threads: int) -> None:
    jobs = [(0, 0), (0, 1), (0, 2)]
    deps = {(0, 0): [], (0, 1): [(0, 2)], (0, 2): [(0, 1)]}
    with pytest.raises((RuntimeError, JobFailed), match="stalled"):
        finishes(jobs, lambda s, t: deps[(s, t)], lambda s, t: None, threads)


def threads_used(jobs: list[tuple[int, int]], work, threads: int) -> set[int]:
    """The threads that ran jobs (independent jobs, so any worker may take any of them)."""
    ran_on: set[int] = set()

    def run(s: int, t: int) -> None:
        ran_on.add(threading.get_ident())
        work(s, t)

    finishes(jobs, lambda s, t: [], run, threads)
    return ran_on


def test_small_jobs_run_on_one_worker() -> None:
    """A run of jobs shorter than SHARE_AFTER never starts the other workers (they would only contend for the
    GIL), even when a job spends longer than that loading kernels."""
    def loads_a_kernel(s: int, t: int) -> None:
        if (s, t) == (0, 0):
            with event.trigger_event("numba:compiler_lock"):  # what numba reports while it loads a kernel
                time.sleep(5 * SHARE_AFTER)

    assert len(threads_used([(0, t) for t in range(200)], lambda s, t: None, 4)) == 1
    assert len(threads_used([(0, t) for t in range(20)], loads_a_kernel, 4)) == 1


def test_a_heavy_job_starts_the_other_workers() -> None:
    """Once a job has worked for SHARE_AFTER, the rest of the pool joins and takes the other ready jobs."""
    ran = threads_used([(0, t) for t in range(40)], lambda s, t: time.sleep(3 * SHARE_AFTER if t == 0 else 1e-3), 4)
    assert len(ran) > 1


def test_the_graph_holds_each_bidegree_once() -> None:
    """The successor lists hold the jobs' own key objects, not a new tuple per edge (12750 jobs of S_3 through
    stem 200 made 25000 of them, 1.4 MiB), and only jobs without dependencies inside start ready."""
    from nassau.engine.scheduler import _graph

    jobs = [(s, t) for t in range(30) for s in range(min(t, 8) + 1)]
    waiting, successors, ready = _graph(jobs, lambda s, t: [(s, t - 1), (s - 1, t)])
    keys = {id(job) for job in jobs}
    assert all(id(nxt) in keys for nexts in successors.values() for nxt in nexts)
    assert sum(map(len, successors.values())) == sum(waiting.values()) > 0
    assert sorted(ready) == [(0, 0)]
