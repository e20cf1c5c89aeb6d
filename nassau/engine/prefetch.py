"""Pieces of a job that idle workers may compute ahead of it: how one heavy bidegree spreads over several cores.

A job that needs a sequence of independent results and then uses them one after the other (Nassau's corrections:
one quasi-inverse per signature, applied in signature order) wraps the pieces in a Prefetch. On a scheduler's worker
thread the Prefetch is posted to the run's Board, and workers that find no ready job compute pieces ahead of the
job, lowest first. The job takes each result in order, computing itself any piece nobody has started, and drops the
pieces it turns out not to need (one not started is never run). A result does not depend on the thread that
computed it, so outputs are the same for any number of threads. Off a worker thread (one thread, a cluster worker)
nothing is posted: the job computes exactly what it takes, as a plain loop would.

Nothing waits on anything but a piece already running, and a piece waits on nothing, so helping cannot deadlock.

Pieces may also travel between processes (nassau.engine.shared_pieces): a Prefetch made with `recipes`, a function
giving picklable descriptions of its pieces that another process holding the same resolution can compute, is posted
to that run's board, which shares the pieces not yet started when another worker has nothing to do (`share`) and
claims them through memory the processes share; a piece claimed elsewhere is `deliver`ed here.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")

_PENDING, _RUNNING, _DONE, _FAILED, _GONE = range(5)

COUNTERS = {"posted": 0, "helped": 0, "dropped": 0}
"""Test hook: Prefetches posted to a board, pieces computed by a helper, pieces dropped before anyone started them."""

_here = threading.local()


class Board:
    """The open Prefetches of one scheduler run. `wake` is called (without locks held) when work is posted, so
    that sleeping workers look again."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._offers: list[Prefetch] = []

    def post(self, offer: Prefetch) -> None:
        with self._lock:
            self._offers = [o for o in self._offers if o.pending()]
            self._offers.append(offer)
        COUNTERS["posted"] += 1
        self._wake()

    def has_work(self) -> bool:
        with self._lock:
            self._offers = [o for o in self._offers if o.pending()]
            return bool(self._offers)

    def help_one(self) -> bool:
        """Compute one piece of the oldest offer that has one left; False if there was none."""
        with self._lock:
            offers = list(self._offers)
        return any(offer.help() for offer in offers)


def attach(board: Board | None) -> None:
    """Make `board` the one this thread's jobs post to (None: post nowhere)."""
    _here.board = board


def helped() -> bool:
    """Whether a Prefetch made on this thread is offered to other workers (a scheduler run on several threads)."""
    return getattr(_here, "board", None) is not None


class Claims(Protocol):
    """Pieces claimed in memory other processes share (nassau.engine.shared_pieces.Offer)."""

    def take(self, i: int) -> bool:
        """Claim piece i here: False if another process has it (its result is delivered)."""

    def close(self) -> None:
        """No piece left is to be started anywhere."""


class Prefetch(Generic[T]):
    """The pieces `tasks` (callables without arguments), taken in order by the job that made them (a context
    manager: leaving it drops every piece not taken). `recipes`, where given, makes the pieces' descriptions for
    other processes (one picklable object each, called with their resolution), only if one asks for them."""

    def __init__(self, tasks: Sequence[Callable[[], T]],
                 recipes: Callable[[], Sequence[object]] | None = None) -> None:
        self._tasks = list(tasks)
        self._state = [_PENDING] * len(self._tasks)
        self._results: dict[int, T] = {}
        self._cond = threading.Condition()
        self._left = len(self._tasks)
        self.recipes = recipes
        self.claims: Claims | None = None  # set by a board that shares the pieces with other processes
        if helped() and len(self._tasks) > 1:
            _here.board.post(self)

    def __enter__(self) -> Prefetch[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.claims is not None:
            self.claims.close()
        with self._cond:
            self._state = [_GONE] * len(self._tasks)  # a piece still running is discarded when it ends
            self._left = 0
            self._results.clear()
            self._tasks = [None] * len(self._tasks)  # what the pieces hold (matrices) goes with the job

    def take(self, i: int) -> T:
        """Piece i: computed by a helper (waiting while one computes it) or here."""
        with self._cond:
            self._claim(i)
            while self._state[i] == _RUNNING:
                self._cond.wait()
            if self._state[i] == _DONE:
                self._state[i] = _GONE
                return self._results.pop(i)
            if self._state[i] == _PENDING:
                self._left -= 1
            self._state[i] = _GONE
            task = self._tasks[i]
        return task()

    def drop(self, i: int) -> None:
        """Piece i is not needed: never start it, and free its result if a helper made one (one still running
        is discarded when it ends)."""
        with self._cond:
            self._claim(i)
            if self._state[i] == _PENDING:
                self._left -= 1
                COUNTERS["dropped"] += 1
            self._state[i] = _GONE
            self._results.pop(i, None)

    def _claim(self, i: int) -> None:
        """Under the condition: a piece pending here that another process has claimed is running there."""
        if self.claims is not None and self._state[i] == _PENDING and not self.claims.take(i):
            self._state[i] = _RUNNING
            self._left -= 1

    def deliver(self, i: int, result: T | None, ok: bool) -> None:
        """Piece i as another process computed it (ok False: it raised there, and the job computes it again)."""
        with self._cond:
            if self._state[i] == _PENDING:  # claimed there before the job here came to it
                self._left -= 1
            elif self._state[i] != _RUNNING:  # dropped or closed meanwhile
                return
            self._state[i] = _DONE if ok else _FAILED
            if ok:
                self._results[i] = result
            self._cond.notify_all()

    def abandon(self) -> None:
        """Pieces running in other processes will not come (their coordinator is gone): the job computes them."""
        with self._cond:
            self.claims = None  # and those not claimed yet are claimed here
            self._state = [_FAILED if st == _RUNNING else st for st in self._state]
            self._cond.notify_all()

    def pending(self) -> bool:
        return self._left > 0

    def share(self, open_claims: Callable[[list[bool]], Claims | None]) -> bool:
        """Let other processes claim the pieces nobody has started: open_claims(which pieces are pending) opens
        them there, or gives None if none can go. Done under the condition, so that the job claims every piece it
        reaches from then on; False if the job has left, or nothing was opened."""
        with self._cond:
            if not self._left or self.claims is not None:
                return False
            self.claims = open_claims([st == _PENDING for st in self._state])
            return self.claims is not None

    def help(self) -> bool:
        """Compute the lowest piece nobody has started; False if none is left. A piece that raises is left to the
        job, which computes it again and sees the error itself."""
        with self._cond:
            if not self._left:
                return False
            i = self._state.index(_PENDING)
            self._state[i] = _RUNNING
            self._left -= 1
            task = self._tasks[i]
        try:
            result = task()
        except Exception:  # noqa: BLE001 - the job recomputes the piece and raises it there
            result = None
            done = _FAILED
        else:
            done = _DONE
            COUNTERS["helped"] += 1
        with self._cond:
            if self._state[i] == _RUNNING:  # not dropped or closed meanwhile
                self._state[i] = done
                if done == _DONE:
                    self._results[i] = result
            self._cond.notify_all()
        return True
