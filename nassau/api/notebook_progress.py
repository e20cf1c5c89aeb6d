"""Progress in a notebook: an HTML <progress> bar updated in place, which Jupyter, JupyterLab and VS Code show
without widgets. Same methods as nassau.api.progress.Reporter, the terminal's bar."""
from __future__ import annotations

import sys
import threading
import time
from html import escape

from nassau.api.progress import StopsOnError
from nassau.cost.estimate import Estimate
from nassau.cost.eta import Countdown

UPDATE_EVERY = 0.25
"""Seconds between redraws: a run finishes thousands of bidegrees, the notebook needs a few frames."""


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython already imported, so nothing is imported to find out)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return type(shell).__name__ == "ZMQInteractiveShell"


class NotebookBar(StopsOnError):
    def __init__(self, total: int, label: str) -> None:
        from IPython.display import HTML, display

        self._html = HTML
        self.total, self.label, self.done = total, label, 0
        self.start = self._shown = time.perf_counter()
        self._lock = threading.Lock()
        self._countdown: Countdown | None = None
        self._handle = display(self._html(self._render("")), display_id=True)

    def _render(self, note: str) -> str:
        return (f'<div><progress value="{self.done}" max="{max(self.total, 1)}" style="width: 40%"></progress> '
                f"{escape(self.label)}: {self.done}/{self.total} bidegrees, {time.perf_counter() - self.start:.1f} s"
                f"{escape(note)}</div>")

    def expect(self, est: Estimate) -> None:
        """The run's estimate, shown beside the bar, whose ETA counts down."""
        self._countdown = Countdown(est)
        self.label = f"{self.label} (estimate {est.line()})"

    def advance(self, s: int, t: int) -> None:
        """One bidegree finished (called from worker threads)."""
        with self._lock:
            self.done += 1
            if self._countdown is not None:
                self._countdown.advance(s, t)
            now = time.perf_counter()
            if now - self._shown >= UPDATE_EVERY:
                self._shown = now
                eta = self._countdown.text() if self._countdown is not None else ""
                eta = f", {eta}" if eta else ""
                self._handle.update(self._html(self._render(f"; last (n={t - s}, s={s}){eta}")))

    def resumed(self, bidegrees: list[tuple[int, int]]) -> None:
        """Bidegrees the save directory held: counted done, and the ETA's work is what is left."""
        with self._lock:
            self.done += len(bidegrees)
            if self._countdown is not None:
                self._countdown.resumed(bidegrees)
            eta = self._countdown.text() if self._countdown is not None else ""
            self._handle.update(self._html(self._render(f"; {len(bidegrees)} resumed" + (f", {eta}" if eta else ""))))

    def finish(self, summary: str) -> None:
        self._handle.update(self._html(self._render(f". {summary}")))

    def abort(self) -> None:
        self._handle.update(self._html(self._render(". Stopped.")))
