"""The bidegree jobs on a Dask cluster, over a shared save directory (`--cluster ADDRESS`, `--workers N`).

The client sends one task per bidegree, each taking the tasks of its dependencies as arguments (engine.dependencies:
the graph the threads follow, the relaxed wavefront for Nassau's steps), so Dask runs them in that order, reruns a
task whose worker died, and gives a task to a worker holding one of its inputs (its candidates are the workers that
ran its dependencies; work stealing moves the rest to idle workers). A task returns only its count of new
generators: the data lives in the save directory. Each worker process keeps one Resolution per save directory
between tasks, loads the files written since its last task (checksummed; a half-written file is a temporary that is
never read), runs engine.compute and writes its file by an atomic rename, as a thread does. Dask itself is imported
only here and only when a cluster is asked for: the base install has none.
"""
from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Self

from nassau.engine.errors import EngineError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import compute, dependencies, resolved_module
from nassau.engine.scheduler import JobFailed
from nassau.store.save_dir import SaveDir, StoreError, module_from_manifest

#: Seconds to wait for the Dask scheduler at --cluster ADDRESS to answer.
CONNECT_TIMEOUT = 20.0
#: Seconds a task waits for its inputs to appear in the save directory (a network filesystem may show a new file
#: to another machine late); after that the directory is not shared and the task fails saying so. A worker reads
#: NASSAU_INPUT_WAIT (seconds) instead where it is set: the tests set a few, so that a task sent before its inputs
#: (a missing dependency) fails in seconds, not minutes.
INPUT_WAIT = 120.0
INPUT_WAIT_VARIABLE = "NASSAU_INPUT_WAIT"
#: Seconds between two progress notes (workers, tasks running), each a round trip to the scheduler.
STATUS_EVERY = 1.0


class ClusterError(EngineError):
    """The cluster cannot run the jobs (no Dask, no scheduler at the address, a task that keeps killing workers)."""


class Cluster:
    """A Dask client, of the scheduler at `address` or of a local cluster of `workers` processes, as the engine's
    Executor. on_status gets a short note (workers, tasks running) every STATUS_EVERY seconds of a run."""

    def __init__(self, address: str | None = None, workers: int | None = None,
                 on_status: Callable[[str], None] | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError("--cluster and --workers need Dask: pip install 'nassau[distributed]'") from None
        self.on_status = on_status
        #: Bidegrees the save directory held when the jobs were sent (the engine then loads the workers' files too).
        self.resumed: int | None = None
        self._local = None
        if workers is not None:
            # One thread per process: the processes share no GIL, and a worker's jobs never race on its resolution.
            self._local = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit=0)
            self.client = Client(self._local)
            return
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None

    def close(self) -> None:
        self.client.close()
        if self._local is not None:
            self._local.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, jobs: list[tuple[int, int]], deps: Callable[[int, int], list[tuple[int, int]]], region: Region,
            algorithm: str, store: SaveDir, on_done: Callable[[int, int], None] | None) -> None:
        """Send every job, each after its dependencies among them, and wait for all; on_done(s, t) as each ends."""
        from distributed import KilledWorker, as_completed

        self.resumed = store.loaded
        run = f"nassau-{uuid.uuid4().hex[:12]}"  # a fresh name per run: a dead client's tasks are never reused
        path = str(store.path.resolve())
        futures = {}
        for s, t in sorted(jobs, key=lambda b: (b[1], b[0])):  # dependencies first; the scheduler wants them known
            inputs = [futures[d] for d in deps(s, t) if d in futures]
            futures[(s, t)] = self.client.submit(job, path, store.fingerprint, algorithm, region, s, t, *inputs,
                                                 key=f"{run}-{s}-{t}", priority=-(t * (region.max_s + 1) + s))
        where = {fut.key: b for b, fut in futures.items()}
        done = threading.Event()
        notes = threading.Thread(target=self._notes, args=(done, run), name="nassau-cluster-status", daemon=True)
        notes.start()
        try:
            for fut in as_completed(list(futures.values())):
                s, t = where[fut.key]
                futures.pop((s, t))  # the scheduler keeps a result while a dependent still needs it
                if fut.status != "finished":
                    error = fut.exception()
                    if isinstance(error, KilledWorker):
                        raise ClusterError(f"the job (n={t - s}, s={s}) was running on every worker that died "
                                           f"under it ({error}); not retried again") from None
                    raise JobFailed(f"job (n={t - s}, s={s}): {error}") from error
                if on_done is not None:
                    on_done(s, t)
        finally:
            done.set()
            self.client.cancel(list(futures.values()))
            notes.join()

    def _notes(self, done: threading.Event, run: str) -> None:
        """Tell on_status how many workers there are and how many of this run's tasks they are running."""
        while self.on_status is not None and not done.wait(STATUS_EVERY):
            try:
                processing = self.client.processing()
            except Exception:  # noqa: BLE001, S112 - a note missed; the run itself reports real failures
                continue
            running = sum(1 for keys in processing.values() for key in keys if str(key).startswith(run))
            self.on_status(f"{len(processing)} workers, {running} running")


# -- on a worker ------------------------------------------------------------------------------------------------

class _WorkerRun:
    """What one worker process keeps of one save directory between tasks: the resolution loaded or computed so far,
    and per row the first t not yet in it (so catching up looks at new files only, never lists the directory)."""

    def __init__(self, path: str, algorithm: str) -> None:
        spec, module, _ = module_from_manifest(Path(path))
        self.store = SaveDir(Path(path), spec, module, algorithm)
        self.res = Resolution(resolved_module(module, algorithm), algorithm)
        self.algorithm = algorithm
        self.next_t: list[int] = []
        self.running: set[tuple[int, int]] = set()
        self.lock = threading.Lock()

    def catch_up(self, s: int, t: int) -> None:
        """Load every saved bidegree of rows <= s and degrees <= t not yet here (none this process is computing)."""
        res = self.res
        while len(self.next_t) <= s:
            self.next_t.append(res.min_degree + len(self.next_t))
        wanted = []
        for row in range(s + 1):
            while res.is_done(row, self.next_t[row]):
                self.next_t[row] += 1
            wanted += [(row, u) for u in range(self.next_t[row], t + 1) if (row, u) not in self.running]
        self.store.load_into(res, bidegrees=wanted)
        # A kernel kept for a job another worker has done would stay here for ever.
        for ks, kt in [k for k in res.kernels if res.is_done(k[0] + 1, k[1])]:
            res.take_kernel(ks, kt)


_RUNS: dict[tuple[str, str, str], _WorkerRun] = {}
_RUNS_LOCK = threading.Lock()


def job(path: str, fingerprint: str, algorithm: str, region: Region, s: int, t: int, *inputs: int) -> int:
    """The task (s, t) on a worker: catch up on the save directory, check the job's inputs are there, compute and
    save (unless a run of this task that died after saving already did); returns the new generators' count.
    inputs are the dependencies' counts, unused: they order the tasks and place them near their data."""
    with _RUNS_LOCK:
        key = (path, fingerprint, algorithm)
        if key not in _RUNS:
            _RUNS[key] = _WorkerRun(path, algorithm)
        state = _RUNS[key]
    res = state.res
    needed = [d for d in dependencies(algorithm)(s, t) if region.contains(*d)]
    wait = input_wait()
    deadline, pause = time.monotonic() + wait, 0.01
    while True:
        with state.lock:
            res.algebra.extend(region.t_limit - res.min_degree + 1)
            state.catch_up(s, t)
            missing = [d for d in needed if not res.is_done(*d)]
            if not missing:
                if res.is_done(s, t):
                    return res.new_gens[(s, t)]
                state.running.add((s, t))
                break
        if time.monotonic() > deadline:
            ms, mt = missing[0]
            raise StoreError(f"the input (n={mt - ms}, s={ms}) of job (n={t - s}, s={s}) is not in {path} after "
                               f"{wait:g} s: do the client and every worker see one shared directory there?")
        time.sleep(pause)
        pause = min(2 * pause, 1.0)
    try:
        compute(res, region, algorithm, s, t, state.store)
    finally:
        with state.lock:
            state.running.discard((s, t))
    return res.new_gens[(s, t)]


def input_wait() -> float:
    """How long a task waits for its inputs: NASSAU_INPUT_WAIT seconds where set (and positive), else INPUT_WAIT."""
    try:
        given = float(os.environ.get(INPUT_WAIT_VARIABLE, ""))
    except ValueError:
        return INPUT_WAIT
    return given if given > 0 else INPUT_WAIT
