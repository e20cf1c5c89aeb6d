"""Progress on stderr: a live rich bar on a terminal, one summary line otherwise, nothing with --quiet."""
from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress


class StopsOnError:
    """`with bar:` around the work shows the bar stopped (abort()) if the work raises, and re-raises; finish(summary)
    stays the caller's, after the block, since the summary reads the result."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()


class Reporter(StopsOnError):
    def __init__(self, total: int, label: str, quiet: bool, stream: TextIO | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.label = label
        self.total = total
        self.done = 0
        self._where = ""
        #: A note on the executor (a cluster run: its workers and the jobs they are running), shown after the bar.
        self._note = ""
        self.start = time.perf_counter()
        self._lock = threading.Lock()
        self._live = not quiet and self.stream.isatty()
        self._progress: Progress | None = None
        if self._live:
            # rich only where a bar is drawn: importing it is 20 ms of a 0.8 s warm run that prints one line
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
                                      "{task.total} bidegrees"), TimeElapsedColumn(),
                                      console=Console(file=self.stream), transient=True)
            self._task = self._progress.add_task(label, total=total)
            self._progress.start()

    def advance(self, s: int, t: int) -> None:
        """One bidegree finished."""
        with self._lock:
            self.done += 1
            self._where = f": (n={t - s}, s={s})"
            if self._progress is not None:
                self._progress.update(self._task, advance=1, description=self._description())

    def status(self, note: str) -> None:
        """Show this note beside the bar until the next one."""
        with self._lock:
            self._note = note
            if self._progress is not None:
                self._progress.update(self._task, description=self._description())

    def _description(self) -> str:
        return self.label + self._where + (f" [{self._note}]" if self._note else "")

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def finish(self, summary: str) -> None:
        if self._progress is not None:
            self._progress.stop()
        if not self.quiet:
            print(f"{summary} in {self.elapsed:.2f} s", file=self.stream)

    def abort(self) -> None:
        if self._progress is not None:
            self._progress.stop()
