"""A heavy step's pieces computed by other worker processes: how a Nassau step on the critical path spreads over
the cores of a `--processes` run, as it does over threads (nassau.engine.prefetch).

A worker whose step makes a Prefetch with recipes (nassau_step.SignatureRows: which differential, degree, rows and
columns) posts it to its ProcessBoard. When another worker has no job, the coordinator asks the busy ones to share
(`ProcessBoard.want`): the step's pieces not yet started are opened as an offer in its row of a Slab, memory that
every worker process shares (mapped before the fork), and the recipes go to the coordinator, which hands them to
workers that have no job (`help_with`): such a helper catches up on the results it lacks (the step's inputs are
finished before the step runs), claims the last piece nobody has started, computes it from its own copy of the
resolution and the shared product tables, and writes it into the owner's inbox, a slot the offer reserved for that
piece in shared memory; a short notice, relayed by the coordinator, tells the owner, which reads the piece where it
lies. The owner takes its pieces in order as before, claiming each it reaches; one a helper has claimed it waits
for. A claim is one byte under a lock the processes share, so no piece is computed twice on purpose, and the owner
and its helpers meet from the two ends. A piece's result does not depend on the process that computed it, so the
resolution is the same for any number of workers.

Pieces are large (S_2 through stem 150: a median of 0.5 MB, the largest 30 MB, d on a signature's rows over every
column), too large to pickle through pipes (about 200 MB/s here); a copy into shared memory is one memcpy. Each
worker's inbox has two halves, used by its offers in turn: an offer opens its half only once no helper of the
offer before it in that half is still writing there.
"""
from __future__ import annotations

import mmap
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from algebra.milnor.table_arena import process_lock, shared_zeros
from fp import QuasiInverse, field
from nassau.engine.prefetch import Prefetch

MAX_PIECES = 1 << 15
"""Pieces an offer may share; a step with more keeps them (S_2 through stem 150 has at most a few thousand)."""
INBOX = 1 << 30
"""Bytes of each worker's inbox (two halves; virtual memory: pages are used as pieces are written, and given back
after an offer that used more than RELEASE). Pieces that do not fit in a half stay with their step."""
RELEASE = 1 << 26
ALIGN = 64

PENDING, TAKEN, ELSEWHERE, WRITTEN = 0, 1, 2, 3

COUNTERS = {"offered": 0, "helped": 0, "delivered": 0, "relayed": 0}
"""Test hook (per process): offers sent, pieces computed for another worker, pieces delivered from one, notices
the coordinator relayed from a helper to a piece's owner."""


class Slab:
    """Each worker's open offers and inbox: states[k, h, i] of worker k's piece i in half h, serials[k, h] the
    number of the offer using that half (0: closed), and inboxes[k] the bytes pieces are written into."""

    def __init__(self, workers: int) -> None:
        self.states = shared_zeros(workers * 2 * MAX_PIECES, np.int8).reshape(workers, 2, MAX_PIECES)
        self.serials = shared_zeros(workers * 2, np.int64).reshape(workers, 2)
        self.lock = process_lock()
        self._maps = [mmap.mmap(-1, INBOX) for _ in range(workers)]
        self.inboxes = [np.frombuffer(m, dtype=np.uint8) for m in self._maps]

    def open(self, k: int, serial: int, shared: np.ndarray, abandoned: Callable[[], bool]) -> None:
        """Open worker k's offer `serial` in its half: the pieces `shared` (bool per piece) for helpers, the rest
        taken here. First wait for helpers still writing pieces of the half's last offer."""
        h = serial % 2
        while True:
            with self.lock:
                if not (self.states[k, h] == ELSEWHERE).any() or abandoned():
                    self.states[k, h, :len(shared)] = np.where(shared, PENDING, TAKEN)
                    self.states[k, h, len(shared):] = TAKEN
                    self.serials[k, h] = serial
                    return
            time.sleep(0.0002)

    def take(self, k: int, serial: int, i: int) -> bool:
        """The owner claims its piece i: False if a helper has it."""
        h = serial % 2
        with self.lock:
            if self.states[k, h, i] in (ELSEWHERE, WRITTEN) and self.serials[k, h] == serial:
                return False
            self.states[k, h, i] = TAKEN
            return True

    def close(self, k: int, serial: int) -> None:
        with self.lock:
            if self.serials[k, serial % 2] == serial:
                self.serials[k, serial % 2] = 0

    def claim_last(self, k: int, serial: int, n: int) -> int:
        """A helper claims worker k's last piece nobody has started (-1: none, or the offer is closed)."""
        h = serial % 2
        with self.lock:
            if self.serials[k, h] != serial:
                return -1
            left = np.flatnonzero(self.states[k, h, :n] == PENDING)
            if not len(left):
                return -1
            self.states[k, h, left[-1]] = ELSEWHERE
            return int(left[-1])

    def written(self, k: int, serial: int, i: int) -> None:
        """A helper is done writing worker k's piece i (or gave it up): the half may be reused."""
        with self.lock:
            self.states[k, serial % 2, i] = WRITTEN

    def has_pending(self, k: int, serial: int, n: int) -> bool:
        """Whether worker k's offer is open with a piece nobody has started (read without the lock: a hint)."""
        h = serial % 2
        return self.serials[k, h] == serial and bool((self.states[k, h, :n] == PENDING).any())

    def release(self, k: int, serial: int, used: int) -> None:
        """Give the system back the pages of the half an offer used (they read as zeros if touched again)."""
        start = (serial % 2) * (INBOX // 2)
        self._maps[k].madvise(mmap.MADV_REMOVE, start, -(-used // mmap.PAGESIZE) * mmap.PAGESIZE)


def slab_for(workers: int) -> Slab | None:
    """A slab for a run's workers, or None where the system gives no process-shared lock or memory (the pieces then
    stay with their steps)."""
    try:
        return Slab(workers)
    except OSError:
        return None


def capacity(recipe) -> int:
    """The bytes a piece's slot holds: its arrays at most, each aligned."""
    return -(-(recipe.result_bytes() + 3 * ALIGN) // ALIGN) * ALIGN


def slots(recipes: Sequence) -> tuple[np.ndarray, np.ndarray, int]:
    """Each piece's offset in a half and whether it has a slot there (the last pieces first, as helpers claim
    them, until the half is full), and the bytes the slots take."""
    offsets = np.zeros(len(recipes), dtype=np.int64)
    shared = np.zeros(len(recipes), dtype=bool)
    at = 0
    for i in range(len(recipes) - 1, -1, -1):
        size = capacity(recipes[i])
        if at + size > INBOX // 2:
            break
        offsets[i], shared[i] = at, True
        at += size
    return offsets, shared, at


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
    """Where the jobs of worker k post their Prefetches. A step's pieces are shared only once the coordinator asks
    (`want`: another worker has nothing to do), one Prefetch at a time: then the latest one's pieces not yet
    started are opened to the other workers (its recipes sent through `send`), and those they write to its inbox
    are delivered to it. Until asked a step makes no recipes and claims nothing in shared memory: on two busy
    workers (S_2 through stem 90) sharing every step cost about a tenth of the run."""

    def __init__(self, slab: Slab | None, k: int, send: Callable[[object], None]) -> None:
        self._slab, self._k, self._send = slab, k, send
        self._serial = 0
        self._open: dict[int, tuple[Prefetch, int]] = {}
        self._lock = threading.Lock()
        self._abandoned = False
        self._latest: Prefetch | None = None  # the last Prefetch posted, not shared
        self._wanted = False  # asked for while no Prefetch could be shared: share the next one posted

    def post(self, offer: Prefetch) -> None:
        if self._slab is None or offer.recipes is None:
            return
        with self._lock:
            self._latest, wanted = offer, self._wanted
        if wanted:
            self._share()

    def want(self) -> None:
        """Another worker has nothing to do: share the latest Prefetch's pieces not yet started, or if it has none
        (or one is shared already), the next Prefetch's."""
        with self._lock:
            self._wanted = True
        self._share()

    def _share(self) -> None:
        with self._lock:
            offer = self._latest
            if offer is None or not offer.pending() or self._open or self._abandoned:
                return
            self._latest = None
            self._serial += 1
            serial = self._serial
        recipes = offer.recipes()
        if len(recipes) > MAX_PIECES:
            return
        offsets, fits, used = slots(recipes)

        def open_claims(pending: list[bool]) -> Offer | None:
            shared = fits & np.array(pending, dtype=bool)
            if not shared.any():
                return None
            self._slab.open(self._k, serial, shared, lambda: self._abandoned)
            with self._lock:
                self._open[serial] = (offer, used)
            return Offer(self._slab, self._k, serial, lambda: self._forget(serial))

        if offer.share(open_claims):
            with self._lock:
                self._wanted = False
            COUNTERS["offered"] += 1
            self._send(("offer", serial, list(recipes), offsets))

    def _forget(self, serial: int) -> None:
        with self._lock:
            _, used = self._open.pop(serial, (None, 0))
        if used > RELEASE:
            self._slab.release(self._k, serial, used)

    def deliver(self, notice: tuple) -> None:
        """A piece another worker wrote to this worker's inbox: (serial, i, where: the layout of its arrays or None
        if it raised there, p)."""
        serial, i, where, p = notice
        with self._lock:
            offer, _ = self._open.get(serial, (None, 0))
        if offer is None:
            return
        COUNTERS["delivered"] += 1
        if where is None:
            offer.deliver(i, None, False)
            return
        half = self._slab.inboxes[self._k][(serial % 2) * (INBOX // 2):]
        image, preimage, pivots = (half[at:at + int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype)
                                   .reshape(shape) for shape, dtype, at in where[:3])
        offer.deliver(i, (QuasiInverse(pivots, preimage, where[3], field(p)), image), True)

    def abandon(self) -> None:
        """No piece will come any more (the coordinator is gone): the job computes those it waits for."""
        with self._lock:
            self._abandoned = True
            offers = [offer for offer, _ in self._open.values()]
        for offer in offers:
            offer.abandon()


def _write(half: np.ndarray, offset: int, capacity: int, result: tuple[QuasiInverse, np.ndarray]) -> tuple | None:
    """Write a piece's arrays into its slot; their layout (shape, dtype, offset each, then the quasi-inverse's
    source dimension), or None if they do not fit."""
    inverse, image = result
    arrays = [np.ascontiguousarray(a) for a in (image, inverse.preimage, inverse.pivots)]
    if sum(-(-a.nbytes // ALIGN) * ALIGN for a in arrays) > capacity:
        return None
    layout, at = [], offset
    for a in arrays:
        half[at:at + a.nbytes] = a.reshape(-1).view(np.uint8)
        layout.append((a.shape, a.dtype.str, at))
        at += -(-a.nbytes // ALIGN) * ALIGN
    return (*layout, inverse.source_dim)


def help_with(res: object, slab: Slab, owner: int, serial: int, recipes: Sequence[Callable], offsets: np.ndarray,
              send: Callable[[object], None], stop: Callable[[], bool]) -> int:
    """Compute worker `owner`'s pieces from the last, each written to its inbox and announced as ("piece", owner,
    notice), until none is left or stop() (a job is waiting here); returns how many. A piece that raises, or does
    not fit its slot, is announced as failed: its owner computes it."""
    tables: dict = {}
    half = slab.inboxes[owner][(serial % 2) * (INBOX // 2):]
    p = res.field.p
    done = 0
    while not stop():
        i = slab.claim_last(owner, serial, len(recipes))
        if i < 0:
            break
        try:
            where = _write(half, int(offsets[i]), capacity(recipes[i]), recipes[i](res, tables))
        except Exception:  # noqa: BLE001 - the owner computes the piece again and raises it there
            where = None
        slab.written(owner, serial, i)
        send(("piece", owner, (serial, i, where, p)))
        COUNTERS["helped"] += 1
        done += 1
    return done
