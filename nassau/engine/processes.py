"""Bidegree jobs on worker processes of this machine, each with a copy of the resolution, and on a thread of this
process: threads share one interpreter lock, processes do not.

Each worker is a fork of this process, made once the run's first jobs, too light to be worth a round trip through a
pipe, have run here; so it holds the resolution as computed so far and every kernel loaded here. A job's result travels
back as the `Added` record of its bidegree (nassau.engine.resolution): this process (the coordinator) adds it to its own
resolution, reports it (the caller saves it there), and hands it to every other worker with that worker's next job, so a
worker holds every bidegree a job reads before it runs it. One of the K workers is a thread here, working on the
resolution here: it has nothing to catch up on or send, and its core is the one the coordinator's own work would
otherwise take from a worker. Jobs are handed out in the threads' order (scheduler.JobGraph), and a worker's result does
not depend on which worker ran which job: the kernel a standard step keeps for (s + 1, t) is recomputed by the worker
that runs (s + 1, t) if another one ran (s, t) (standard.kernel_of), as on a cluster, and a kept kernel whose user ran
elsewhere is dropped. Catching up costs little: adding every result of S_2 through stem 90, every s, takes 0.16 s of a
16 s resolution. A worker with no job helps another's running Nassau step with its pieces (nassau.engine.shared_pieces):
the coordinator asks the busy workers to offer them only then, and relays them.

The product tables move to shared memory before the workers are forked (ProductTables.share_between_processes): a
table one worker fills, every other reads from its next batch on, and none is filled twice. A worker keeps to one
core (numba's threads set to 1) and ignores Ctrl-C, which is the coordinator's: it stops the workers and raises. A
job that fails ends the run with JobFailed, its error the cause.
"""
from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING

from algebra.milnor.product_tables import tables_for
from nassau.engine import compile_time, prefetch
from nassau.engine.region import BidegreeST
from nassau.engine.scheduler import JobFailed, JobGraph
from nassau.engine.shared_pieces import COUNTERS as PIECES
from nassau.engine.shared_pieces import ProcessBoard, Slab, help_with, slab_for

if TYPE_CHECKING:
    from nassau.engine.resolution import Added, Resolution

#: Seconds a worker is given to leave after the run before it is terminated.
STOP_WAIT = 5.0
#: Jobs handed to a worker ahead: the next one waits in its pipe while it sends the last result back.
QUEUED = 2
#: Jobs run here before the workers are forked while the median of the last LIGHT_JOBS takes less than LIGHT
#: seconds: a round trip through a worker costs the coordinator about 0.35 ms of CPU alone, and S_2 through stem 90
#: has 673 such jobs (t < 36, 0.22 s in all) before its jobs grow past 1 ms (a median, so that a job's first call of
#: a kernel does not count).
LIGHT = 0.001
LIGHT_JOBS = 8
#: A job that alone takes this many seconds here (kernel loading not counted) forks the workers at once: a run that
#: resumes a save directory starts where its jobs are heavy, and S_2 from stem 170 to 180 (s <= 152) ran its first
#: LIGHT_JOBS jobs, 1 to 2 minutes each, on one core before the workers came.
HEAVY = 0.1


def run_processes(res: Resolution, jobs: Iterable[BidegreeST], deps: Callable[[int, int], Iterable[BidegreeST]],
                  work: Callable[[int, int], None], workers: int,
                  on_done: Callable[[int, int], None] | None = None,
                  bound: Callable[[int, int], BidegreeST | None] | None = None) -> None:
    """Run work(s, t) for every job on `workers` workers, each after its dependencies: a thread here and workers - 1
    forked processes, whose results are added to `res` here; on_done(s, t) is called here once (s, t) is in `res`.
    bound(s, t): the job whose worker must run (s, t) too (a motivic step reads the kernel the step below it kept,
    which stays in that worker), None for any worker (the chains then spread over the workers as they come free:
    S_2's columns t alternate between two)."""
    graph = JobGraph(jobs, deps)
    tables_for(res.algebra).share_between_processes()
    _run_here_while_light(graph, work, on_done)
    if not graph.left:
        return
    sys.stdout.flush()  # a fork copies unwritten output, which the worker would write again when it ends
    sys.stderr.flush()
    context = multiprocessing.get_context("fork")
    conns: list[Connection] = []
    procs = []
    workers = min(workers, graph.left)
    slab = slab_for(workers)
    for k in range(workers - 1):  # and one worker here, the last
        mine, theirs = context.Pipe()
        proc = context.Process(target=_serve, args=(theirs, res, work, [*conns, mine], slab, k),
                               name=f"nassau-worker-{k}", daemon=True)
        proc.start()
        theirs.close()
        conns.append(mine)
        procs.append(proc)
    # Sending runs on a thread per worker: a large message to a worker that is itself sending its result would block
    # both sides if this loop sent it, since this loop is the one that reads results.
    senders: list[_Sender | _Here] = [_Sender(conn) for conn in conns]
    here = _Here(work, res, slab, len(conns))
    senders.append(here)
    conns.append(here.conn)
    log = _Log(len(conns))
    queued: list[deque[BidegreeST]] = [deque() for _ in conns]
    ran: dict[BidegreeST, int] = {}  # the worker that ran each job since the fork (bound jobs only)
    waiting: list[deque[BidegreeST]] = [deque() for _ in conns]  # ready, bound to that worker

    def take(k: int) -> BidegreeST | None:
        """Worker k's next job: one bound to it, else one bound to none (those bound to another wait for it)."""
        if waiting[k]:
            return waiting[k].popleft()
        while graph.ready:
            job = graph.pop()
            before = bound(*job) if bound is not None else None
            owner = ran.get(before) if before is not None else None
            if owner is None or owner == k:
                return job
            waiting[owner].append(job)
        return None

    helping = [False] * len(conns)
    asked = [False] * len(conns)  # asked to share its step's pieces, and has not offered any since
    offers: list[tuple] = []  # (owner, serial, recipes, offsets) of the steps whose pieces others may compute
    try:
        while graph.left:
            for k, sender in enumerate(senders):
                while len(queued[k]) < QUEUED:
                    job = take(k)
                    if job is None:
                        break
                    sender.send(("job", job, log.news(k)))
                    queued[k].append(job)
            if slab is not None:
                _offer_help(offers, senders, queued, helping, asked, slab, log)
            busy = [conn for k, conn in enumerate(conns) if queued[k] or helping[k]]
            if not busy:
                raise JobFailed("scheduler stalled: a job waits on a dependency that never runs")
            for conn in wait(busy):
                k = conns.index(conn)
                try:
                    kind, *payload = conn.recv()
                except (EOFError, OSError):
                    job = queued[k][0] if queued[k] else None
                    raise JobFailed("a worker died" if job is None else
                                    f"the worker running (n={job[1] - job[0]}, s={job[0]}) died") from None
                if kind == "error":
                    raise JobFailed(str(payload[0])) from payload[0]
                if kind == "offer":
                    offers.append((k, *payload))
                    asked[k] = False
                elif kind == "piece":
                    owner, piece = payload
                    PIECES["relayed"] += 1
                    if owner == len(conns) - 1:
                        here.board.deliver(piece)
                    else:
                        senders[owner].send(("piece", piece))
                elif kind == "free":
                    helping[k] = False
                else:
                    job = queued[k].popleft()
                    added = res.added(*job) if kind == "here" else payload[0]
                    if kind != "here":
                        _adopt(res, added)
                    log.append(k, added)
                    if bound is not None:
                        ran[job] = k
                    graph.finish(job)
                    if on_done is not None:
                        on_done(*job)
    finally:
        for sender in senders:
            sender.send(None)
        for sender in senders:
            sender.join(STOP_WAIT)
        for proc in procs:
            proc.join(STOP_WAIT if not any(queued) else 0)
            if proc.is_alive():
                proc.terminate()
                proc.join()
        for conn in conns:
            conn.close()


def _offer_help(offers: list[tuple], senders: list, queued: list[deque], helping: list[bool], asked: list[bool],
                slab: Slab, log: _Log) -> None:
    """Hand each worker that has no job and helps nobody the oldest offer of another worker's step that still has
    a piece nobody has started (offers: (owner, serial, recipes, offsets); the closed and finished ones are
    dropped). Where there is none, ask the workers running jobs to offer their steps' pieces (each once until it
    offers)."""
    offers[:] = [o for o in offers if slab.has_pending(o[0], o[1], len(o[2]))]
    for k, sender in enumerate(senders):
        if queued[k] or helping[k]:
            continue
        offer = next((o for o in offers if o[0] != k), None)
        if offer is not None:
            sender.send(("help", *offer, log.news(k)))
            helping[k] = True
            continue
        for j, owner in enumerate(senders):
            if queued[j] and not asked[j]:
                owner.ask()
                asked[j] = True


def _run_here_while_light(graph: JobGraph, work: Callable[[int, int], None],
                          on_done: Callable[[int, int], None] | None) -> None:
    """Run jobs here, lowest t first, until the median of the last LIGHT_JOBS takes LIGHT seconds or one job HEAVY
    seconds (kernel loading not counted): a run's first bidegrees take well under a millisecond each, less than a
    job's round trip through the pipes, and the workers forked after them hold what they added."""
    compile_time.install()
    me = threading.get_ident()
    recent: deque[float] = deque(maxlen=LIGHT_JOBS)
    while graph.ready:
        job = graph.pop()
        start, loading = time.monotonic(), compile_time.spent(me)
        try:
            work(*job)
        except Exception as exc:
            raise JobFailed(str(exc)) from exc
        graph.finish(job)
        if on_done is not None:
            on_done(*job)
        recent.append(time.monotonic() - start - (compile_time.spent(me) - loading))
        if recent[-1] >= HEAVY or len(recent) == LIGHT_JOBS and statistics.median(recent) >= LIGHT:
            return


class _Mailbox:
    """A thread of its own that takes messages in order (send(None) ends it): _run reads them from self._queue."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def send(self, message: object) -> None:
        self._queue.put(message)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        raise NotImplementedError


class _Sender(_Mailbox):
    """Sends a worker its messages in order (send(None) ends the worker, then the thread)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        super().__init__("nassau-sender")

    def _run(self) -> None:
        while True:
            message = self._queue.get()
            try:
                self._conn.send(message)
            except OSError:  # the worker is gone: the loop reading results says so
                return
            if message is None:
                return

    def ask(self) -> None:
        """Ask the worker to share its running step's pieces (its pipe's reader thread hears it)."""
        self.send(("want",))


class _Here(_Mailbox):
    """The worker in this process, on a thread of its own: its jobs add to the resolution here, so it catches up on
    nothing and sends back only that a job is done (or its error), through a pipe the loop waits on with the
    workers' (the news a job is sent with are dropped). It helps the other workers' steps, and they help its own,
    as a forked worker does (worker k)."""

    def __init__(self, work: Callable[[int, int], None], res: Resolution, slab: Slab | None, k: int) -> None:
        self.conn, self._done = multiprocessing.Pipe(duplex=False)
        self._work, self._res, self._slab = work, res, slab
        self.board = ProcessBoard(slab, k, self._done.send)
        super().__init__("nassau-worker-here")

    def ask(self) -> None:
        """Share the running step's pieces, on a thread of its own: the recipes may be more than the pipe holds,
        and the loop that asks is the one that reads the pipe. (Asks are rare: one until the worker offers.)"""
        threading.Thread(target=self.board.want, name="nassau-share", daemon=True).start()

    def _run(self) -> None:
        prefetch.attach(self.board)
        while True:
            message = self._queue.get()
            if message is None:
                return
            try:
                if message[0] == "help":
                    _help(self._res, self._slab, message, self._done.send, lambda: not self._queue.empty())
                    continue
                _, (s, t), _ = message
                try:
                    self._work(s, t)
                    outcome: tuple = ("here", None)
                except BaseException as exc:  # noqa: BLE001 - handed to the loop
                    outcome = ("error", _picklable(exc))
                self._done.send(outcome)
            except OSError:  # the loop has ended (an error elsewhere, Ctrl-C) and closed its end
                return


class _Log:
    """Every result in the order it came, with the worker it came from, until every worker has been sent it."""

    def __init__(self, workers: int) -> None:
        self._entries: list[tuple[int, Added]] = []
        self._base = 0  # the index of _entries[0] among all results
        self._seen = [0] * workers

    def append(self, origin: int, added: Added) -> None:
        self._entries.append((origin, added))

    def news(self, k: int) -> list[Added]:
        """The results worker k has not been sent and does not hold (those of the other workers)."""
        out = [added for origin, added in self._entries[self._seen[k] - self._base:] if origin != k]
        self._seen[k] = self._base + len(self._entries)
        done = min(self._seen) - self._base
        if done:
            del self._entries[:done]
            self._base += done
        return out


def _serve(conn: Connection, res: Resolution, work: Callable[[int, int], None], theirs: list[Connection],
           slab: Slab | None, k: int) -> None:
    """Worker k: add what the coordinator sends, run the job, send back what it added (or its error); help another
    worker's step when told to. It first closes its copies of the coordinator's ends of the pipes (`theirs`), so that
    it reads the end of its pipe, and leaves, if the coordinator dies. A thread reads the pipe, so that pieces sent
    for the running job reach it (inbox: everything else, in order)."""
    import numba

    for end in theirs:
        end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    numba.set_num_threads(1)  # one core each: the workers are the parallelism (fp.threads then stays serial)
    board = ProcessBoard(slab, k, conn.send)
    prefetch.attach(board)
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_read, args=(conn, inbox, board), name="nassau-reader", daemon=True).start()
    while True:
        message = inbox.get()
        if message is None:
            return
        try:
            for added in message[-1]:
                _adopt(res, added)
            if message[0] == "help":
                _help(res, slab, message, conn.send, lambda: not inbox.empty())
                continue
            _, (s, t), _ = message
            work(s, t)
            conn.send(("done", res.added(s, t)))
        except BaseException as exc:  # noqa: BLE001 - handed to the coordinator
            conn.send(("error", _picklable(exc)))


def _read(conn: Connection, inbox: queue.SimpleQueue, board: ProcessBoard) -> None:
    """A worker's pipe: pieces and requests to share to the board, the rest to the inbox (None when the coordinator
    ends or is gone)."""
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            board.abandon()
            inbox.put(None)
            return
        if message is not None and message[0] == "piece":
            board.deliver(message[1])
            continue
        if message is not None and message[0] == "want":
            board.want()
            continue
        inbox.put(message)
        if message is None:
            return


def _help(res: Resolution, slab: Slab, message: tuple, send: Callable[[object], None],
          stop: Callable[[], bool]) -> None:
    """Compute pieces of another worker's step (message: ("help", owner, serial, recipes, offsets, news), the news
    added), then say this worker is free."""
    _, owner, serial, recipes, offsets, _ = message
    help_with(res, slab, owner, serial, recipes, offsets, send, stop)
    send(("free",))


def _adopt(res: Resolution, added: Added) -> None:
    """Add a result another worker computed, and drop the kernel kept here for its job (a standard step keeps
    ker d_s for (s + 1, t), which that worker recomputed)."""
    res.add(added)
    res.take_kernel(added.s - 1, added.t)


def _picklable(exc: BaseException) -> BaseException:
    """The exception itself if it survives pickling, else a RuntimeError saying what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure to pickle
        return RuntimeError(f"{type(exc).__name__}: {exc}")
