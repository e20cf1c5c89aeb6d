"""Run bidegree jobs on a pool of worker threads over a dependency graph.

A job becomes ready when every dependency inside the job set is finished; ready jobs run lowest t
first (then lowest s), which keeps the low-s chain, the critical path, moving. Workers never wait on
other jobs while holding a parallel section: a job runs to completion on its worker, and the compiled
kernels it calls release the GIL, so threads overlap without nesting. The graph alone fixes what each
job reads, so the results are the same for any number of workers. A worker that finds no ready job helps a
running one with the pieces it posted (nassau.engine.prefetch): that is how a heavy bidegree on the critical path
spreads over idle cores.

The workers after the first start only once some job has run for SHARE_AFTER seconds, not counting what it spent
loading or compiling kernels (nassau.engine.compile_time): a run of small jobs is Python work under one lock (the GIL),
and there a second thread only adds contention (S_2 through stem 40, kernels loaded: 0.21 s of CPU on one thread,
0.36 s on two).
"""
from __future__ import annotations

import heapq
import threading
import time
from typing import Callable, Iterable

from nassau.engine import compile_time, prefetch
from nassau.engine.region import BidegreeST

SHARE_AFTER = 0.01
"""Seconds of work a job must show before the other workers start (S_2 through stem 50: no job reaches 8 ms)."""


class JobFailed(RuntimeError):
    """A job raised; the original exception is the __cause__."""


def _graph(jobs: Iterable[BidegreeST], deps: Callable[[int, int], Iterable[BidegreeST]]
           ) -> tuple[dict[BidegreeST, int], dict[BidegreeST, list[BidegreeST]], list[tuple[int, int]]]:
    """How many unfinished dependencies each job waits on, each job's successors, and the (t, s) heap of the jobs
    ready now. The successor lists hold the job keys themselves, not new tuples, and run_jobs drops what it has
    done with (S_3 through stem 200, s <= 50: 12750 jobs, whose graph held 3 MiB)."""
    pending = set(jobs)
    waiting: dict[BidegreeST, int] = {}
    successors: dict[BidegreeST, list[BidegreeST]] = {job: [] for job in pending}
    ready: list[tuple[int, int]] = []
    for job in pending:
        inside = [d for d in deps(*job) if d in pending]
        waiting[job] = len(inside)
        for d in inside:
            successors[d].append(job)
        if not inside:
            heapq.heappush(ready, (job[1], job[0]))
    return waiting, successors, ready


class JobGraph:
    """The jobs left, what each waits on, and those ready now: popped lowest t first, then lowest s. Shared by the
    threads here and the worker processes of nassau.engine.processes."""

    def __init__(self, jobs: Iterable[BidegreeST], deps: Callable[[int, int], Iterable[BidegreeST]]) -> None:
        self.waiting, self.successors, self.ready = _graph(jobs, deps)
        self.left = len(self.waiting)

    def pop(self) -> BidegreeST:
        t, s = heapq.heappop(self.ready)
        return s, t

    def finish(self, job: BidegreeST) -> None:
        """The job is done: its successors wait on one job less."""
        self.left -= 1
        for nxt in self.successors.pop(job):
            self.waiting[nxt] -= 1
            if self.waiting[nxt] == 0:
                del self.waiting[nxt]
                heapq.heappush(self.ready, (nxt[1], nxt[0]))


def run_jobs(jobs: Iterable[BidegreeST], deps: Callable[[int, int], Iterable[BidegreeST]],
             work: Callable[[int, int], None], threads: int = 1,
             on_done: Callable[[int, int], None] | None = None) -> None:
    """Run work(s, t) for every job, each after its dependencies (those in `jobs`) have finished."""
    graph = JobGraph(jobs, deps)
    if not graph.left:
        return
    cond = threading.Condition()
    state = {"error": None, "running": 0}
    finished = threading.Event()  # what the calling thread waits on: set when every job is done, or on an error
    # What runs: since when, on which thread, and that thread's compile time then (to start the other workers).
    running_since: dict[BidegreeST, tuple[float, int, float]] = {}

    def heavy() -> bool:
        now = time.monotonic()
        return any(now - since - (compile_time.spent(thread) - compiling) >= SHARE_AFTER
                   for since, thread, compiling in running_since.values())

    def wake() -> None:
        with cond:
            cond.notify_all()

    board = prefetch.Board(wake) if threads > 1 else None

    def worker() -> None:
        prefetch.attach(board)
        try:
            work_loop()
        finally:
            prefetch.attach(None)

    def work_loop() -> None:
        while True:
            helping = False
            with cond:
                while not graph.ready and graph.left and state["error"] is None:
                    if not state["running"]:  # nothing runs that could make a job ready: a cycle
                        state["error"] = RuntimeError("scheduler stalled: a job waits on a dependency that never runs")
                        break
                    if board is not None and board.has_work():
                        helping = True
                        break
                    cond.wait()
                if state["error"] is not None or not graph.left:
                    cond.notify_all()
                    finished.set()
                    return
                if not helping:
                    s, t = graph.pop()
                    state["running"] += 1
                    me = threading.get_ident()
                    running_since[(s, t)] = (time.monotonic(), me, compile_time.spent(me))
            if helping:
                board.help_one()
                continue
            try:
                work(s, t)
                if on_done is not None:
                    on_done(s, t)
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                with cond:
                    if state["error"] is None:
                        state["error"] = exc
                    cond.notify_all()
                finished.set()
                return
            with cond:
                state["running"] -= 1
                del running_since[(s, t)]
                graph.finish((s, t))
                cond.notify_all()

    if threads <= 1:
        # One worker: run it here, so profilers and Ctrl-C see the work directly.
        worker()
        if state["error"] is not None:
            raise state["error"]
        return
    compile_time.install()  # heavy() discounts kernel loading, which numba reports through this listener
    pool = [threading.Thread(target=worker, name=f"nassau-worker-{k}", daemon=True) for k in range(threads)]
    pool[0].start()
    started = 1
    while not finished.wait(timeout=SHARE_AFTER if started < threads else 0.2):
        if started < threads:
            with cond:
                grow = heavy()
            if grow:
                for th in pool[started:]:
                    th.start()
                started = threads
    with cond:
        error = state["error"]
        cond.notify_all()
    if error is not None:
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise error
        raise JobFailed(str(error)) from error
    for th in pool[:started]:
        th.join()
