"""A run held to a memory budget: refused up front when its estimate does not fit (naming the largest stem that
does), its product tables sized from what the budget leaves them, and, while it runs, a MemoryGuard that shrinks the
tables and then stops the run cleanly, saying where and what it would have needed.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import replace

from algebra.milnor.product_tables import budget_bytes, tables_for, use_tables
from algebra.module.interface import Module
from algebra.module.spec import ModuleSpec
from nassau.cost.estimate import Estimate, estimate
from nassau.cost.generators import GeneratorModel
from nassau.cost.memory import (SHRINK_AT, STOP_AT, BudgetError, MemoryGuard, available_bytes, format_size,
                                parse_size, tree_rss)
from nassau.engine.errors import EngineError
from nassau.engine.region import Region
from nassau.engine.resolve import resolved_module

#: Share of what the budget leaves beside the rest of the run that the product tables may take.
TABLES_SHARE = 0.9
EXIT_BUDGET = 2
#: A run with no product tables against one with all it uses, by prime: S_3 through stem 200, s <= 50, 12.6 s
#: against 7.2 s (docs/speed.md); at p = 2 S_2 through stems 110 and 120 under half their peaks, with 7% and 19% of
#: their tables, took 3.05x and 1.95x the CPU (docs/estimate.md), about 2.75x for none. A run whose tables are capped
#: is taken to lose in proportion to what they lack.
ENUMERATED = {2: 2.75}
ENUMERATED_ODD = 1.75


class MemoryBudgetExceeded(EngineError):
    """The run stopped to stay within its memory budget (one line: what it needs, where, and what is kept)."""


def budget_of(memory: int | str | None) -> int | None:
    """A run's budget in bytes from what its caller gave: None (not held), "available" (the memory available, less a
    margin), a number of bytes or a size such as "4G"; EngineError (one line) for anything else."""
    if memory is None:
        return None
    if memory == "available":
        return available_bytes()
    if isinstance(memory, bool) or not isinstance(memory, (int, str)):
        raise EngineError(f"memory must be a number of bytes or a size such as '4G' (got {memory!r})")
    try:
        return parse_size(memory) if isinstance(memory, str) else max(1, memory)
    except BudgetError as exc:
        raise EngineError(str(exc)) from None


def usable(budget: int) -> float:
    """What a run may plan to hold under a budget: up to where the guard starts shrinking (the rest is room for
    the estimate's errors)."""
    return SHRINK_AT * budget


def tables_budget(est: Estimate, budget: int) -> int:
    """The product tables' budget under a memory budget: what the rest of the run leaves of the usable part
    (TABLES_SHARE of it), and never more than NASSAU_PRODUCT_TABLES_MB where that is set. Not capped at their own
    default (a quarter of the machine, for a caller with no budget): S_2 through stem 180 uses twice that, and the
    products a table lacks are enumerated, much more slowly."""
    share = TABLES_SHARE * (usable(budget) - (est.peak_bytes - est.tables_bytes))
    return int(max(0.0, min(float(budget_bytes(default_mb=max(share, 0.0) / 2**20)), share)))


def fitted(module: Module, spec: ModuleSpec, region: Region, algorithm: str, threads: int, processes: bool,
           budget: int, generators: GeneratorModel | None = None, timed: bool = False,
           saving: bool = False) -> tuple[Estimate, int]:
    """The estimate of the run with its product tables sized for `budget`, and that tables' budget."""
    room = budget_bytes(default_mb=usable(budget) / 2**20)  # the tables as large as they grow, within the budget
    first = estimate(module, spec, region, algorithm, threads, processes, tables_budget=room, timed=timed,
                     generators=generators, saving=saving)
    tables = tables_budget(first, budget)
    if tables >= first.tables_bytes:
        return first, tables
    capped = first.peak_bytes - first.tables_bytes + tables
    parts = dict(first.parts, product_tables=float(tables))
    wall = first.wall_s
    if wall is not None:  # the products no table holds are enumerated, up to ENUMERATED times slower
        slower = ENUMERATED.get(resolved_module(module, algorithm).algebra.prime, ENUMERATED_ODD)
        wall *= 1.0 + (slower - 1.0) * (1.0 - tables / max(first.tables_bytes, 1.0))
    return replace(first, peak_bytes=capped, tables_bytes=float(tables), parts=parts, wall_s=wall,
                   tables_capped=True), tables


def fits(est: Estimate, budget: int) -> bool:
    """Whether the estimate fits the usable part of the budget."""
    return est.peak_bytes <= usable(budget)


def largest_stem(region: Region, fits_through: Callable[[Region], bool]) -> int | None:
    """The largest stem through which a run of the region's rows fits, by fits_through(the region cut at that stem)
    (the run's estimate against its budget, which grows with the stem: a bisection; None: not even the bottom
    one)."""
    low, high = region.min_degree, region.chart_max_stem
    ok = None
    while low <= high:
        mid = (low + high) // 2
        if fits_through(Region(max_s=region.max_s, min_degree=region.min_degree, max_stem=mid)):
            ok, low = mid, mid + 1
        else:
            high = mid - 1
    return ok


def refusal(label: str, region: Region, est: Estimate, budget: int, largest: int | None, named: bool) -> str:
    where = "the --memory budget" if named else "the memory available (less a margin; --memory sets a budget)"
    over = f"over {SHRINK_AT:.0%} of {where} of {format_size(budget)}"
    fits = (f"the largest stem that fits is {largest} (--stem {largest} --max-s {region.max_s})" if largest is not None
            else "no stem fits")
    return (f"{label} through {region.describe()} needs about {format_size(est.peak_bytes)} (+-{est.peak_spread:.0%}) "
            f"of memory, {over}; {fits}; --force runs it anyway, stopping cleanly "
            f"before it outgrows the budget")


class HeldRun:
    """The watch over one run (`with` around it): the product tables limited to their share, a MemoryGuard, and
    `done(s, t)` to call after each finished job, which stops the run when the guard says so."""

    def __init__(self, module: Module, algorithm: str, region: Region, budget: int, est: Estimate | None,
                 tables: int | None, save_dir: str | None, processes: bool, hard_stop: bool = False,
                 rss=tree_rss) -> None:
        self.basis = resolved_module(module, algorithm).algebra
        self.region, self.budget, self.est, self.tables = region, budget, est, tables
        self.save_dir, self.processes, self.hard_stop = save_dir, processes, hard_stop
        self.finished: set[tuple[int, int]] = set()
        #: Whether a bidegree was done before this run (loaded, or an earlier part's): set by the caller that holds
        #: the resolution, so that the stop names the first bidegree really left.
        self.done_before: Callable[[int, int], bool] = lambda s, t: False
        self.guard = MemoryGuard(budget, self._shrink, self._kill, rss)
        self._evicting = threading.Lock()  # the guard's thread and the jobs' both evict
        #: Bytes the jobs' evictions freed since the guard's sample number `_sample` (which still counts them)
        self._freed, self._sample = 0, 0

    def __enter__(self) -> HeldRun:
        if self.tables is not None:
            held = tables_for(self.basis)
            if self.tables > held.budget:  # fresh tables with more room (their storage is sized once); no run reads
                use_tables(self.basis, self.tables)  # the old ones now, and no result depends on which exist
            else:
                held.limit(self.tables)
        self.guard.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.guard.__exit__(*exc)

    def done(self, s: int, t: int) -> None:
        """After each finished job: stop when the guard says so, or when a job this one makes ready is predicted
        to need more than the budget has left (a job's matrices are made at once, faster than the guard samples:
        S_2 through stem 400, s <= 4, under 1 GiB reached 1.02 GiB before the guard's last threshold stopped it),
        and evicting the product tables does not leave it room (S_2 through stem 120, s <= 63, under half its peak
        stopped so at (6, 121) with 96 MiB of tables that it could have given up)."""
        self.finished.add((s, t))
        if self.guard.stopping.is_set():
            raise MemoryBudgetExceeded(self.message(self.guard.peak))
        sizes = self.est.job_bytes if self.est is not None else None
        if not sizes:
            return
        if self.guard.samples != self._sample:
            self._freed, self._sample = 0, self.guard.samples
        # the guard's last sample (reading the memory after every job cost 7 ms a job), less what was evicted since
        held = self.guard.last - self._freed
        for nxt in ((s, t + 1), (s + 1, t)):
            need = sizes.get(nxt, 0.0)
            while need and nxt not in self.finished and held + need > STOP_AT * self.budget:
                freed = self._evict()  # the tables give way before the run stops
                if not freed:
                    raise MemoryBudgetExceeded(self.message(held + need, nxt))
                held -= freed
                self._freed += freed

    def message(self, used: float, at: tuple[int, int] | None = None) -> str:
        """`needs about X at (s, t); finished bidegrees are kept in DIR`: X the estimate (or what the run held, if
        more), (s, t) the job that needs it, else the first bidegree not finished."""
        if at is None:
            left = [b for b in self.region.bidegrees() if b not in self.finished and not self.done_before(*b)]
            at = min(left, key=lambda b: (b[1], b[0])) if left else None
        where = f" at (s, t) = {at}" if at is not None else ""
        kept = (f"finished bidegrees are kept in {self.save_dir}" if self.save_dir
                else "finished bidegrees are not kept (--save-dir keeps them, and a rerun resumes)")
        need = max(self.est.peak_bytes if self.est is not None else 0.0, float(used))
        return (f"stopped within the memory budget of {format_size(self.budget)}: needs about {format_size(need)}"
                f"{where}; {kept}")

    def _shrink(self, used: int) -> None:
        """The guard's first threshold passed: evict the product tables."""
        self._evict()

    def _evict(self) -> int:
        """Evict the product tables (threads: made again as needed, within half of what they held; the bytes freed,
        once the batches reading them finish) or stop them growing (worker processes share them: 0 freed)."""
        with self._evicting:
            tables = tables_for(self.basis)
            if self.processes:
                tables.limit(tables.nbytes)
                return 0
            held = int(tables.nbytes)
            fresh = use_tables(self.basis, min(tables.budget, held // 2))
            return max(0, held - int(fresh.nbytes))

    def _kill(self, used: int) -> None:
        """Past the last threshold there is no waiting for the running jobs: the line, then exit at once (every
        finished bidegree's file is complete; a half-written one is a temporary name the next run ignores). A run in
        a caller's process (not hard_stop) is not the process's to end: it stops after the jobs running now."""
        if not self.hard_stop:
            self.guard.stopping.set()
            return
        print(f"nassau: error: {self.message(used)}", file=sys.stderr, flush=True)
        os._exit(EXIT_BUDGET)
