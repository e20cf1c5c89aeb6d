"""Which way a run's workers take when its caller names none: threads of this process or worker processes, whichever
the estimate says is faster on this machine within the memory budget. Threads share one interpreter lock, so on two
cores S_2 through stem 90 (every s) gets 1.20x one thread from two threads and 1.52x from two processes
(docs/speed.md); a run too small to share (under the estimate's few seconds of work), one on the GPU (the device is
opened before a fork), an unstable run or a cofiber's stays on threads.
"""
from __future__ import annotations

import multiprocessing

from algebra.module.interface import Module
from algebra.module.spec import ModuleSpec
from gpu import device
from nassau.cost import calibration
from nassau.cost.budget import fits, fitted
from nassau.engine.cofiber import CofiberSpec
from nassau.engine.region import Region
from nassau.engine.resolve import UNSTABLE


def processes_apply(module: Module, algorithm: str, threads: int) -> bool:
    """Whether worker processes can run this run at all: several workers, a system that forks, no device, a run
    the engine hands to them (not an unstable one, not a cofiber's own sequence)."""
    return (threads > 1 and "fork" in multiprocessing.get_all_start_methods() and algorithm != UNSTABLE
            and CofiberSpec.read(module) is None and device.current() is None)


def fastest_way(module: Module, spec: ModuleSpec, region: Region, algorithm: str, threads: int, budget: int,
                saving: bool) -> bool:
    """True: worker processes; False: threads. By the two estimates' wall times, each with its tables sized for
    the budget; processes only where their estimate fits it."""
    if not processes_apply(module, algorithm, threads) or calibration.within_probe(module, region):
        return False
    by_threads, _ = fitted(module, spec, region, algorithm, threads, False, budget, timed=True, saving=saving)
    by_processes, _ = fitted(module, spec, region, algorithm, threads, True, budget, timed=True, saving=saving)
    return fits(by_processes, budget) and by_processes.wall_s < by_threads.wall_s
