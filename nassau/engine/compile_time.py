"""Seconds each thread has spent at numba's compiler lock: compiling kernels, or loading them from the cache.

A job that first calls a kernel pays for loading it (30 ms or more, 0.2 s for the first kernel of a process), which
says nothing about how heavy the job is; the scheduler subtracts this time before it judges (nassau.engine.scheduler).
Read through numba's event API ("numba:compiler_lock" starts before the lock is taken, so waiting for another
thread's compilation counts too). The listener is registered by `install`, which the scheduler calls when a run
starts on more than one thread: a process-wide hook, made by the run that needs it and never on import.
"""
from __future__ import annotations

import threading
import time

from numba.core import event

_lock = threading.Lock()
_spent: dict[int, float] = {}  # thread -> seconds in finished holds
_since: dict[int, float] = {}  # thread -> start of the hold it is in now (the lock is reentrant: the outermost)
_depth: dict[int, int] = {}


class _Clock(event.Listener):
    def on_start(self, ev: event.Event) -> None:
        me = threading.get_ident()
        with _lock:
            _depth[me] = _depth.get(me, 0) + 1
            if _depth[me] == 1:
                _since[me] = time.monotonic()

    def on_end(self, ev: event.Event) -> None:
        me = threading.get_ident()
        with _lock:
            _depth[me] -= 1
            if not _depth[me]:
                _spent[me] = _spent.get(me, 0.0) + time.monotonic() - _since.pop(me)


def spent(thread: int) -> float:
    """Seconds the thread (a threading.get_ident()) has spent at the compiler lock so far, a hold in progress
    included."""
    with _lock:
        ongoing = time.monotonic() - _since[thread] if thread in _since else 0.0
        return _spent.get(thread, 0.0) + ongoing


_installed = False


def install() -> None:
    """Register the clock with numba (once per process)."""
    global _installed
    with _lock:
        if not _installed:
            event.register("numba:compiler_lock", _Clock())
            _installed = True
