"""The bidegree jobs on a Dask cluster, over a shared save directory (`--cluster ADDRESS`, `--workers N`).

The client sends one task per run of RUN consecutive bidegrees of a row (s, t) with the same t // RUN, each taking
the tasks of its jobs' dependencies as arguments (engine.dependencies: the graph the threads follow, the relaxed
wavefront for Nassau's steps), so Dask runs them in that order, reruns a task whose worker died, and gives a task to
a worker holding one of its inputs (its candidates are the workers that ran its dependencies; work stealing moves
the rest to idle workers). A run rather than a bidegree per task: the single scheduler spends about 2 ms per task,
and a row's bidegrees form a chain anyway, (s, t - 1) before (s, t). A task returns only its jobs' counts of new
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

from algebra.module.motivic import motivic_from_spec
from nassau.engine.errors import EngineError
from nassau.engine.motivic import MotivicResolution
from nassau.engine.motivic import compute as compute_motivic
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import compute, dependencies, resolved_module
from nassau.engine.scheduler import JobFailed
from nassau.engine.tau_quotient import ALGORITHM as QUOTIENT
from nassau.engine.tau_quotient import step_quotient
from nassau.store.motivic_save import ALGORITHM as MOTIVIC
from nassau.store.motivic_save import MotivicSave
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
#: Bidegrees of a row per task.
RUN = 4


class ClusterError(EngineError):
    """The cluster cannot run the jobs (no Dask, no scheduler at the address, a task that keeps killing workers)."""


def check_cluster(cluster: str | None, workers: int | None, save_dir: object) -> None:
    """EngineError (one line) unless these ask for a cluster run that can start: one of an address or a number of
    local workers, and a save directory."""
    if cluster is not None and workers is not None:
        raise EngineError("give either a cluster's address or a number of local workers, not both")
    if workers is not None and workers < 1:
        raise EngineError(f"workers must be at least 1 (got {workers})")
    if cluster is not None and not cluster.strip():
        raise EngineError("the cluster's address is empty (e.g. tcp://scheduler:8786)")
    if (cluster is not None or workers is not None) and save_dir is None:
        raise EngineError("a cluster run needs a save directory, shared by the client and every worker: the jobs "
                          "read their inputs from it and write their results there")


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
        tasks, inputs = runs(jobs, deps)
        futures = {}
        for key, bidegrees in tasks.items():  # dependencies first; the scheduler wants them known
            s, t = bidegrees[0]
            futures[key] = self.client.submit(job_run, path, store.fingerprint, algorithm, region, bidegrees,
                                              *[futures[d] for d in inputs[key]], key=f"{run}-{s}-{t}",
                                              priority=-(t * (region.max_s + 1) + s))
        where = {fut.key: key for key, fut in futures.items()}
        done = threading.Event()
        notes = threading.Thread(target=self._notes, args=(done, run), name="nassau-cluster-status", daemon=True)
        notes.start()
        try:
            for fut in as_completed(list(futures.values())):
                key = where[fut.key]
                futures.pop(key)  # the scheduler keeps a result while a dependent still needs it
                if fut.status != "finished":
                    error = fut.exception()
                    s, t = tasks[key][0]
                    if isinstance(error, KilledWorker):
                        raise ClusterError(f"the jobs from (n={t - s}, s={s}) were running on every worker that "
                                           f"died under them ({error}); not retried again") from None
                    raise JobFailed(f"job (n={t - s}, s={s}) or the next in its row: {error}") from error
                if on_done is not None:
                    for s, t in tasks[key]:
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


def runs(jobs: list[tuple[int, int]], deps: Callable[[int, int], list[tuple[int, int]]]
         ) -> tuple[dict[tuple[int, int], list[tuple[int, int]]], dict[tuple[int, int], list[tuple[int, int]]]]:
    """The tasks, keyed (s, t // RUN) in the order to send them (each after those it reads), each with its jobs in
    order; and the tasks each task reads (those holding its jobs' dependencies, itself left out)."""
    def home(b: tuple[int, int]) -> tuple[int, int]:
        return b[0], b[1] // RUN

    tasks: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for b in sorted(jobs, key=lambda b: (b[1] // RUN, b[0], b[1])):
        tasks.setdefault(home(b), []).append(b)
    inputs = {key: sorted({home(d) for b in bidegrees for d in deps(*b) if home(d) in tasks} - {key},
                          key=lambda k: (k[1], k[0]))
              for key, bidegrees in tasks.items()}
    return tasks, inputs


# -- on a worker ------------------------------------------------------------------------------------------------

class _WorkerRun:
    """What one worker process keeps of one save directory between tasks: the resolution loaded or computed so far,
    and per row the first t not yet in it (so catching up looks at new files only, never lists the directory)."""

    def __init__(self, path: str, algorithm: str) -> None:
        self.algorithm = algorithm
        self.store, self.res = self._open(Path(path))
        self.next_t: list[int] = []
        self.running: set[tuple[int, int]] = set()
        self.lock = threading.Lock()

    def _open(self, path: Path) -> tuple[SaveDir, Resolution]:
        """The directory's store and an empty resolution of its module, rebuilt from the manifest."""
        spec, module, _ = module_from_manifest(path)
        return SaveDir(path, spec, module, self.algorithm), Resolution(resolved_module(module, self.algorithm),
                                                                      self.algorithm)

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
        self._load(wanted)
        # A kernel kept for a job another worker has done would stay here for ever.
        for ks, kt in [k for k in self._kept() if res.is_done(k[0] + 1, k[1])]:
            res.take_kernel(ks, kt)

    def _load(self, bidegrees: list[tuple[int, int]]) -> None:
        self.store.load_into(self.res, bidegrees=bidegrees)

    def _kept(self) -> list[tuple[int, int]]:
        return list(self.res.kernels)

    def compute(self, region: Region, s: int, t: int) -> None:
        compute(self.res, region, self.algorithm, s, t, self.store)


class _MotivicWorkerRun(_WorkerRun):
    """The same for a motivic run (nassau.store.motivic_save): the module and its weights rebuilt from the manifest,
    each loaded bidegree with its generators' weights. Over A^C a step reads the kernel the step below it kept: here
    if this worker ran that step, else the one that worker saved beside its bidegree; over A^C/tau (C(tau)) a step
    whose kernel another worker kept computes it again. The same basis each way, so the same output as threads."""

    def _open(self, path: Path) -> tuple[SaveDir, MotivicResolution]:
        spec, _, _ = module_from_manifest(path)
        motivic = motivic_from_spec(spec)
        self.save = MotivicSave(path, spec.name, motivic, None, self.algorithm, spec=spec, worker=True)
        return self.save.store, MotivicResolution(motivic)

    def _load(self, bidegrees: list[tuple[int, int]]) -> None:
        self.save.catch_up(self.res, bidegrees)

    def _kept(self) -> list[tuple[int, int]]:
        return list(self.res.kernels) + list(self.res.cycles)

    def compute(self, region: Region, s: int, t: int) -> None:
        if self.algorithm == QUOTIENT:
            step_quotient(self.res, s, t, keep_kernel=region.contains(s + 1, t))
            self.save.save(self.res, s, t, None)
            return
        self.save.kernel_for(self.res, s, t)
        compute_motivic(self.res, region, s, t, self.save)


def worker_run(path: str, algorithm: str) -> _WorkerRun:
    """A worker's state for a save directory of this algorithm's run."""
    return (_MotivicWorkerRun if algorithm in (MOTIVIC, QUOTIENT) else _WorkerRun)(path, algorithm)


_RUNS: dict[tuple[str, str, str], _WorkerRun] = {}
_RUNS_LOCK = threading.Lock()


def job_run(path: str, fingerprint: str, algorithm: str, region: Region, bidegrees: list[tuple[int, int]],
            *inputs: list[int]) -> list[int]:
    """The task of a run of bidegrees: each job in order (the first catches up on the inputs from other tasks);
    returns their new generators' counts. inputs are the counts of the tasks read, unused (see job)."""
    return [job(path, fingerprint, algorithm, region, s, t) for s, t in bidegrees]


def job(path: str, fingerprint: str, algorithm: str, region: Region, s: int, t: int, *inputs: int) -> int:
    """The task (s, t) on a worker: catch up on the save directory, check the job's inputs are there, compute and
    save (unless a run of this task that died after saving already did); returns the new generators' count.
    inputs are the dependencies' counts, unused: they order the tasks and place them near their data."""
    with _RUNS_LOCK:
        key = (path, fingerprint, algorithm)
        if key not in _RUNS:
            _RUNS[key] = worker_run(path, algorithm)
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
        state.compute(region, s, t)
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
