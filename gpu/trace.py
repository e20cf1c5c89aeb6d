"""One structured log event per large row reduction, saying where it ran (logger "nassau.trace").

Why: GPU RREF pays only for large matrices (REFERENCE 3.4), so a run must show which reductions went where.
Each event is a log record whose message reads `row_reduce rows=R cols=C path=gpu|cpu bidegree=(s, t)` and
whose `event` attribute holds the same fields as a dict, for handlers that want them structured. Events are
emitted when the logger is enabled for INFO: `enable()` (the CLI's --trace) or any logging configuration.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import threading
from typing import Iterator, TextIO

LOGGER = logging.getLogger("nassau.trace")
_CURRENT = threading.local()
#: Reductions with min(rows, cols) below this are not traced (there are many and they are cheap).
TRACE_MIN = 1024


def enable(stream: TextIO | None = None) -> None:
    """Send trace events to `stream` (stderr by default), one line each."""
    LOGGER.setLevel(logging.INFO)
    if not LOGGER.handlers:
        handler = logging.StreamHandler(stream or sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
        LOGGER.addHandler(handler)


@contextlib.contextmanager
def working_on(s: int, t: int) -> Iterator[None]:
    """Name the bidegree this thread works on, for the events of reductions that do not name one."""
    previous = getattr(_CURRENT, "bidegree", None)
    _CURRENT.bidegree = (s, t)
    try:
        yield
    finally:
        _CURRENT.bidegree = previous


def reduction(rows: int, cols: int, path: str, bidegree: tuple[int, int] | None = None) -> None:
    """Record that a rows x cols reduction ran on `path` ("gpu" or "cpu")."""
    if min(rows, cols) < TRACE_MIN or not LOGGER.isEnabledFor(logging.INFO):
        return
    if bidegree is None:
        bidegree = getattr(_CURRENT, "bidegree", None)
    event = {"event": "row_reduce", "rows": int(rows), "cols": int(cols), "path": path,
             "bidegree": None if bidegree is None else tuple(int(x) for x in bidegree)}
    LOGGER.info("row_reduce rows=%d cols=%d path=%s bidegree=%s", rows, cols, path,
                "-" if bidegree is None else f"({bidegree[0]}, {bidegree[1]})", extra={"event": event})
