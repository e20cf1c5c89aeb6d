"""A heavy step's pieces computed by other worker processes: how a Nassau step on the critical path spreads over
the cores of a `--processes` run, as it does over threads (nassau.engine.prefetch).

A worker whose step makes a Prefetch with recipes (nassau_step.SignatureRows: which differential, degree, rows and
columns) opens an Offer in its row of a Slab, memory that every worker process shares (mapped before the fork), and
sends the recipes to the coordinator. The coordinator hands them to workers that have no job (`help_with`): such a
helper catches up on the results it lacks (the step's inputs are finished before the step runs), claims the last
piece nobody has started, computes it from its own copy of the resolution and the shared product tables, and sends
it back; the coordinator relays it to the owner, still pickled. The owner takes its pieces in order as before,
claiming each it reaches; one a helper has claimed it waits for. A claim is one byte under a lock the processes
share, so no piece is computed twice on purpose, and the owner and its helpers meet from the two ends. A piece's
result does not depend on the process that computed it, so the resolution is the same for any number of workers.
"""
from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Sequence

import numpy as np

from algebra.milnor.table_arena import process_lock, shared_zeros
from nassau.engine.prefetch import Prefetch

MAX_PIECES = 1 << 15
"""Pieces an offer may share; a step with more keeps them (S_2 through stem 150 has at most a few thousand)."""

PENDING, TAKEN, ELSEWHERE = 0, 1, 2

COUNTERS = {"offered": 0, "helped": 0, "delivered": 0, "relayed": 0}
"""Test hook (per process): offers sent, pieces computed for another worker, pieces delivered from one, pieces the
coordinator relayed from a helper to their owner."""


class Slab:
    """Each worker's open offer: states[k, i] of worker k's piece i, and serials[k] its offer's number (0: none)."""

    def __init__(self, workers: int) -> None:
        self.states = shared_zeros(workers * MAX_PIECES, np.int8).reshape(workers, MAX_PIECES)
        self.serials = shared_zeros(workers, np.int64)
        self.lock = process_lock()

    def open(self, k: int, serial: int, n: int) -> None:
        with self.lock:
            self.states[k, :n] = PENDING
            self.serials[k] = serial

    def take(self, k: int, serial: int, i: int) -> bool:
        """The owner claims its piece i: False if a helper has it."""
        with self.lock:
            if self.states[k, i] == ELSEWHERE and self.serials[k] == serial:
                return False
            self.states[k, i] = TAKEN
            return True

    def close(self, k: int, serial: int) -> None:
        with self.lock:
            if self.serials[k] == serial:
                self.serials[k] = 0

    def claim_last(self, k: int, serial: int, n: int) -> int:
        """A helper claims worker k's last piece nobody has started (-1: none, or the offer is closed)."""
        with self.lock:
            if self.serials[k] != serial:
                return -1
            left = np.flatnonzero(self.states[k, :n] == PENDING)
            if not len(left):
                return -1
            self.states[k, left[-1]] = ELSEWHERE
            return int(left[-1])

    def has_pending(self, k: int, serial: int, n: int) -> bool:
        """Whether worker k's offer is open with a piece nobody has started (read without the lock: a hint)."""
        return self.serials[k] == serial and bool((self.states[k, :n] == PENDING).any())


class Offer:
    """The claims of one Prefetch in its owner's row of the slab (prefetch.Claims)."""

    def __init__(self, slab: Slab, k: int, serial: int, on_close: Callable[[], None]) -> None:
        self._slab, self._k, self._serial, self._on_close = slab, k, serial, on_close

    def take(self, i: int) -> bool:
        return self._slab.take(self._k, self._serial, i)

    def close(self) -> None:
        self._slab.close(self._k, self._serial)
        self._on_close()


class ProcessBoard:
    """Where the jobs of worker k post their Prefetches: one at a time is offered to the other workers (its recipes
    sent through `send`), and the pieces they compute are delivered to it."""

    def __init__(self, slab: Slab, k: int, send: Callable[[object], None]) -> None:
        self._slab, self._k, self._send = slab, k, send
        self._serial = 0
        self._open: dict[int, Prefetch] = {}
        self._lock = threading.Lock()

    def post(self, offer: Prefetch) -> None:
        recipes = offer.recipes
        if recipes is None or len(recipes) > MAX_PIECES:
            return
        with self._lock:
            if self._open:  # the slab row holds one offer
                return
            self._serial += 1
            serial = self._serial
            self._open[serial] = offer
        self._slab.open(self._k, serial, len(recipes))
        offer.claims = Offer(self._slab, self._k, serial, lambda: self._forget(serial))
        COUNTERS["offered"] += 1
        self._send(("offer", serial, list(recipes)))

    def _forget(self, serial: int) -> None:
        with self._lock:
            self._open.pop(serial, None)

    def deliver(self, payload: bytes) -> None:
        """A piece from another worker: (serial, i, result, ok), pickled."""
        serial, i, result, ok = pickle.loads(payload)
        with self._lock:
            offer = self._open.get(serial)
        if offer is not None:
            COUNTERS["delivered"] += 1
            offer.deliver(i, result, ok)

    def abandon(self) -> None:
        """No piece will come any more (the coordinator is gone): the job computes those it waits for."""
        with self._lock:
            offers = list(self._open.values())
            self._open.clear()
        for offer in offers:
            offer.abandon()


def help_with(res: object, slab: Slab, owner: int, serial: int, recipes: Sequence[Callable],
              send: Callable[[object], None], stop: Callable[[], bool]) -> int:
    """Compute worker `owner`'s pieces from the last, each sent as ("piece", owner, payload), until none is left or
    stop() (a job is waiting here); returns how many. A piece that raises is sent as failed: its owner computes it."""
    tables: dict = {}
    done = 0
    while not stop():
        i = slab.claim_last(owner, serial, len(recipes))
        if i < 0:
            break
        try:
            result, ok = recipes[i](res, tables), True
        except Exception:  # noqa: BLE001 - the owner computes the piece again and raises it there
            result, ok = None, False
        send(("piece", owner, pickle.dumps((serial, i, result, ok), protocol=pickle.HIGHEST_PROTOCOL)))
        COUNTERS["helped"] += 1
        done += 1
    return done
