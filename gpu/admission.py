"""Admission of device work weighted by the bytes it allocates (NASSAU_GPU_MEM_BUDGET_MB).

Why weighted: the reference first admitted by count, and a few large launches together ran the device out of
memory while many small ones were needlessly serialised. Here each job asks for its output bytes; jobs run
together while their sum fits the budget. Admission is first come, first served (a large job is not passed
by a stream of small ones), and a job larger than the whole budget is admitted alone once nothing else
runs, so it can never wait forever.
"""
from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager
from typing import Iterator


class Admission:
    """A FIFO weighted semaphore over a byte budget."""

    def __init__(self, budget_bytes: int) -> None:
        if budget_bytes <= 0:
            raise ValueError(f"budget must be positive, got {budget_bytes}")
        self.budget = budget_bytes
        self._cond = threading.Condition()
        self._in_use = 0
        self._running = 0
        self._queue: deque[object] = deque()

    def _fits(self, nbytes: int) -> bool:
        return self._running == 0 or self._in_use + nbytes <= self.budget

    @contextmanager
    def admit(self, nbytes: int) -> Iterator[None]:
        """Hold `nbytes` of the budget for the duration of the block."""
        nbytes = max(0, int(nbytes))
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            while self._queue[0] is not ticket or not self._fits(nbytes):
                self._cond.wait()
            self._queue.popleft()
            self._in_use += nbytes
            self._running += 1
            self._cond.notify_all()  # the next in line may fit as well
        try:
            yield
        finally:
            with self._cond:
                self._in_use -= nbytes
                self._running -= 1
                self._cond.notify_all()

    @property
    def in_use(self) -> int:
        with self._cond:
            return self._in_use
