"""A bounded set of shared streams (NASSAU_GPU_STREAMS), one per calling thread, assigned round-robin.

Why bounded: one stream per job made the reference create thousands of streams and gained nothing; more than
one stream did not help there either (default 1). A thread keeps its stream, so its launches stay ordered.
"""
from __future__ import annotations

import itertools
import threading
from typing import Callable, Generic, TypeVar

S = TypeVar("S")


class StreamPool(Generic[S]):
    """`size` streams made by `factory` on first use; `get` gives the calling thread its stream."""

    def __init__(self, size: int, factory: Callable[[], S]) -> None:
        if size < 1:
            raise ValueError(f"a stream pool needs at least one stream, got {size}")
        self.size = size
        self._factory = factory
        self._streams: list[S] = []
        self._lock = threading.Lock()
        self._next = itertools.count()
        self._local = threading.local()

    def get(self) -> S:
        stream = getattr(self._local, "stream", None)
        if stream is None:
            with self._lock:
                k = next(self._next) % self.size
                if k == len(self._streams):
                    self._streams.append(self._factory())
                stream = self._streams[k]
            self._local.stream = stream
        return stream

    @property
    def created(self) -> int:
        with self._lock:
            return len(self._streams)
