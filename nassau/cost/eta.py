"""The time a run has left: the estimate's seconds for the jobs not yet done, corrected by how the jobs done so far
compared with their own estimate (a machine busier or quieter than when it was calibrated shows there)."""
from __future__ import annotations

import threading
import time

from nassau.cost.estimate import Estimate

#: Share of the predicted work after which the measured ratio is trusted fully (before it, blended with 1).
TRUSTED_AFTER = 0.2


class Countdown:
    def __init__(self, est: Estimate) -> None:
        self.jobs = est.job_seconds or {}
        self.total = sum(self.jobs.values())
        self.speedup = est.speedup
        self.done = 0.0
        self.start = time.perf_counter()
        self._lock = threading.Lock()

    def advance(self, s: int, t: int) -> None:
        with self._lock:
            self.done += self.jobs.get((s, t), 0.0)

    def resumed(self, bidegrees: list[tuple[int, int]]) -> None:
        """These bidegrees were done before the run (loaded from its save directory): their work is not ahead, and
        the clock that measures the jobs done starts now, after the loading."""
        with self._lock:
            self.total -= sum(self.jobs.get(b, 0.0) for b in bidegrees)
            self.start = time.perf_counter()

    def remaining(self) -> float | None:
        """Seconds left, or None without a time estimate."""
        if self.total <= 0:
            return None
        left = (self.total - self.done) / self.speedup
        share = self.done / self.total
        if share <= 0:
            return left
        ratio = (time.perf_counter() - self.start) / (self.done / self.speedup)
        trust = min(1.0, share / TRUSTED_AFTER)
        return max(0.0, left * (trust * ratio + 1.0 - trust))

    def text(self) -> str:
        left = self.remaining()
        if left is None:
            return ""
        minutes, seconds = divmod(int(left + 0.5), 60)
        hours, minutes = divmod(minutes, 60)
        return f"ETA {hours}:{minutes:02d}:{seconds:02d}" if hours else f"ETA {minutes}:{seconds:02d}"
