"""A shared/exclusive lock with writer preference, and the process-wide device lock built from it.

Why: a cooperative (grid-barrier) kernel waits for every block of its grid to be resident at once; if other
kernels of this process hold SMs it can deadlock (REFERENCE 1.5/3.4). So every device section takes
`DEVICE_LOCK` shared (they run concurrently: there is no global mutex around device work), and a section
that launches a cooperative kernel takes it exclusively. The resident master uses its own instance the same
way: launches reading it are readers, the rare capacity doubling that moves it is the writer.

Writer preference: once a writer waits, new readers queue behind it, so a steady stream of readers cannot
starve it. A thread must not take the shared side again while it holds it (a waiting writer would block it).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator


class SharedExclusiveLock:
    """Readers share; a writer excludes readers and other writers; waiting writers go first."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if self._readers == 0:
                    self._cond.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writer or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()

    @property
    def readers(self) -> int:
        with self._cond:
            return self._readers

    @property
    def writers_waiting(self) -> int:
        with self._cond:
            return self._writers_waiting


#: Taken shared by every device section of this process, exclusively by a cooperative kernel's section.
DEVICE_LOCK = SharedExclusiveLock()
