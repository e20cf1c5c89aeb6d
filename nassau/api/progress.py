"""Progress on stderr: a live rich bar on a terminal (one per phase of the work), one summary line otherwise,
nothing with --quiet."""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from nassau.cost.eta import Countdown
from nassau.cost.estimate import Estimate

if TYPE_CHECKING:
    from rich.progress import Progress


def workers_phrase(threads: int, processes: bool) -> str:
    """The workers as a summary line names them: "1 thread", "2 threads", "2 processes"."""
    if processes and threads > 1:
        return f"{threads} processes"
    return f"{threads} thread{'s' if threads > 1 else ''}"


def cluster_phrase(cluster: str | None, workers: int | None) -> str:
    """A cluster run's workers as a summary line names them: "the Dask cluster at ADDRESS", "2 worker processes"."""
    if cluster:
        return f"the Dask cluster at {cluster}"
    return f"{workers} worker process{'es' if workers != 1 else ''}"


class StopsOnError:
    """`with bar:` around the work shows the bar stopped (abort()) if the work raises, and re-raises; finish(summary)
    stays the caller's, after the block, since the summary reads the result."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.abort()


class Reporter(StopsOnError):
    """The command line's progress. On a terminal a live bar, in phases: the first counts `total` bidegrees (or
    other units), each `phase` after it replaces the bar by its own (a pulsing one when its size is not known).
    The `with` block ends with the bar taken down, so that what is printed after it starts on a clean line; output
    printed while the bar is up goes inside `hidden()`. Elsewhere one summary line (finish), nothing when quiet."""

    def __init__(self, total: int | None, label: str, quiet: bool, stream: TextIO | None = None) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.quiet = quiet
        self.label = label
        self.total = total
        self.unit = "bidegrees"
        self.done = 0
        self._where = ""
        #: A note on the executor (a cluster run: its workers and the jobs they are running), shown after the bar.
        self._note = ""
        self.start = time.perf_counter()
        self._lock = threading.Lock()
        self._countdown: Countdown | None = None
        self._live = not quiet and self.stream.isatty()
        self._progress: Progress | None = None
        if self._live:
            # rich only where a bar is drawn: importing it is 20 ms of a 0.8 s warm run that prints one line
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                                      TimeElapsedColumn(), console=Console(file=self.stream), transient=True)
            self._task = self._progress.add_task(label, total=total, count=self._count())
            self._progress.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        super().__exit__(exc_type, exc, tb)
        self._stop()

    def advance(self, s: int, t: int) -> None:
        """One bidegree finished."""
        if self._countdown is not None:
            self._countdown.advance(s, t)
        self.step(f"(n={t - s}, s={s})")

    def expect(self, est: Estimate) -> None:
        """The run's estimate: printed now (above the bar, or as its own line), and the bar counts down its ETA."""
        self._countdown = Countdown(est)
        if not self.quiet:
            with self.hidden():
                print(f"{self.label}: estimate {est.line()}", file=self.stream, flush=True)

    def resumed(self, bidegrees: list[tuple[int, int]]) -> None:
        """Bidegrees the save directory held: counted done, the ETA's work is what is left, and a line says how
        much was there and what is left."""
        if not bidegrees:
            return
        with self._lock:
            self.done += len(bidegrees)
            if self._countdown is not None:
                self._countdown.resumed(bidegrees)
            self._show()
        if not self.quiet:
            left = self._countdown.text() if self._countdown is not None else ""
            with self.hidden():
                print(f"{self.label}: {len(bidegrees)} of {self.total} bidegrees resumed from the save directory"
                      + (f"; {left}" if left else ""), file=self.stream, flush=True)

    def step(self, where: str) -> None:
        """One unit of the phase finished; `where` is shown beside the label."""
        with self._lock:
            self.done += 1
            self._where = f": {where}"
            self._show()

    def phase(self, label: str, total: int | None = None, unit: str = "bidegrees") -> None:
        """A new phase of the work from here on: the bar shows `label` and counts its `total` units from 0 (or,
        with no total, pulses), with its own elapsed time."""
        with self._lock:
            self.label, self.total, self.unit, self.done, self._where, self._note = label, total, unit, 0, "", ""
            if self._progress is not None:
                self._progress.update(self._task, visible=False)
                self._task = self._progress.add_task(label, total=total, count=self._count())
                self._progress.refresh()  # drawn now, however short the phase

    def status(self, note: str) -> None:
        """Show this note beside the bar until the next one."""
        with self._lock:
            self._note = note
            self._show()

    @contextmanager
    def hidden(self) -> Iterator[None]:
        """The bar taken down while the block prints (to stdout, which may be the same terminal), then drawn again
        below what it printed."""
        self._stop()
        try:
            yield
        finally:
            if self._progress is not None:
                self._progress.start()

    def _show(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done, description=self._description(),
                                  count=self._count())

    def _count(self) -> str:
        return f"{self.done}/{self.total} {self.unit}" if self.total is not None else ""

    def _description(self) -> str:
        eta = self._countdown.text() if self._countdown is not None and self.done < (self.total or 0) else ""
        return self.label + self._where + (f" [{self._note}]" if self._note else "") + (f" {eta}" if eta else "")

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def _stop(self) -> None:
        """Take the bar down (it is transient: nothing of it stays on the terminal)."""
        if self._progress is not None:
            self._progress.stop()

    def finish(self, summary: str) -> None:
        self._stop()
        if not self.quiet:
            print(f"{summary} in {self.elapsed:.2f} s", file=self.stream)

    def abort(self) -> None:
        self._stop()
