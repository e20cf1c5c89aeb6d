"""What a run takes when its caller names none, chosen by predicted cost on this machine: how many workers, the way
they run (threads of this process or worker processes) and, for `--algorithm auto`, Nassau's algorithm or the
standard one.

A run of under estimate.SMALL_RUN_S of predicted work takes one thread: on two cores (AMD EPYC, AVX2) two threads
took 1.31x one thread's wall at S_2 through stem 40 (0.9 s in all), 1.29x at stem 70 (3 s of work), 0.93x at stem 80
(5 s) and 0.61x at stem 90 (10 s): the hand-offs between the threads and their interpreter lock cost more than the
second core gives back.

Threads share one interpreter lock, so on two cores S_2 through stem 90 (every s) gets 1.20x one thread from two
threads and 1.52x from two processes (docs/speed.md); a run too small to share (under the estimate's few seconds of
work), one on the GPU (the device is opened before a fork), an unstable run or a cofiber's stays on threads. Nassau's
algorithm wins at large stems and loses at small ones at odd primes (S_3 through stem 150, s <= 40: 4.8 s against
4.0 s; through stem 200: 12.1 s against 21.5 s); a run that resumes a save directory keeps the algorithm it was made
with.
"""
from __future__ import annotations

import multiprocessing

from algebra.module.interface import Module
from algebra.module.spec import ModuleSpec
from gpu import device
from nassau.cost import calibration
from nassau.cost.budget import fits, fitted
from nassau.cost.estimate import Estimate
from nassau.engine.cofiber import CofiberSpec
from nassau.engine.region import Region
from nassau.engine.resolve import UNSTABLE


def processes_apply(module: Module, algorithm: str, threads: int) -> bool:
    """Whether worker processes can run this run at all: several workers, a system that forks, no device, a run
    the engine hands to them (not an unstable one, not a cofiber's own sequence)."""
    return (threads > 1 and "fork" in multiprocessing.get_all_start_methods() and algorithm != UNSTABLE
            and CofiberSpec.read(module) is None and device.current() is None)


class Estimates:
    """The timed estimates a request's choices read, each made once: a run beyond its probe asks for the one of
    Nassau's algorithm on threads up to three times (the algorithm's choice, the threads', the way's)."""

    def __init__(self, module: Module, spec: ModuleSpec, region: Region, budget: int) -> None:
        self.module, self.spec, self.region, self.budget = module, spec, region, budget
        self._made: dict[tuple[str, int, bool, bool], Estimate] = {}

    def fitted(self, algorithm: str, threads: int, processes: bool, saving: bool = False) -> Estimate:
        """The estimate with its tables sized for the budget (nassau.cost.budget.fitted)."""
        key = (algorithm, threads, processes, saving)
        if key not in self._made:
            self._made[key] = fitted(self.module, self.spec, self.region, algorithm, threads, processes, self.budget,
                                     timed=True, saving=saving)[0]
        return self._made[key]

    def within_probe(self) -> bool:
        return calibration.within_probe(self.module, self.region)


def default_threads(estimates: Estimates, algorithm: str, cores: int, saving: bool) -> int:
    """The threads a run takes when its caller names none: the cores, or one for a run too small to share them (one
    within the probe's stems; else where the estimate gives the cores no speed-up, under SMALL_RUN_S of work)."""
    if cores <= 1 or estimates.within_probe():
        return 1
    est = estimates.fitted(algorithm, cores, False, saving)
    return 1 if est.speedup == 1.0 else cores


def fastest_way(estimates: Estimates, algorithm: str, threads: int, saving: bool) -> bool:
    """True: worker processes; False: threads. By the two estimates' wall times, each with its tables sized for
    the budget; processes only where their estimate fits it with the tables whole: the processes share theirs, so a
    run that nears its budget cannot evict them (S_2 through stem 150, s <= 152, under 2 GiB, half its peak, stopped
    on processes at (6, 155) after 20 min; threads evict their tables and go on)."""
    if not processes_apply(estimates.module, algorithm, threads) or estimates.within_probe():
        return False
    by_threads = estimates.fitted(algorithm, threads, False, saving)
    by_processes = estimates.fitted(algorithm, threads, True, saving)
    return (fits(by_processes, estimates.budget) and not by_processes.tables_capped
            and by_processes.wall_s < by_threads.wall_s)


def fastest_algorithm(estimates: Estimates, chosen: str, threads: int, saved: str | None) -> str:
    """`--algorithm auto`'s choice between Nassau's algorithm (`chosen` where it applies) and the standard one, by
    their estimates on this machine (a small run keeps Nassau's); saved: the algorithm of the save directory the
    run resumes, which it keeps."""
    if chosen != "nassau":
        return chosen
    if saved in ("nassau", "standard"):
        return saved
    if estimates.within_probe():
        return chosen
    walls = {}
    for algorithm in ("nassau", "standard"):
        est = estimates.fitted(algorithm, threads, False)
        walls[algorithm] = est.wall_s if fits(est, estimates.budget) else float("inf")
    return "standard" if walls["standard"] < walls["nassau"] else "nassau"
