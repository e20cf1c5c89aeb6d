"""When a kernel should use its parallel (numba prange, 'omp' layer) variant.

Threads pay only on large inputs, and only on idle cores: a parallel region waits at its barrier for every thread,
so one thread descheduled by another busy process stalls the whole region. Measured here (2 cores, another
process busy on one): 8192^2 row_reduce took 0.8 to 3.3 s with two threads against 0.12 s serial. So the automatic
choice also asks the kernel for the number of runnable tasks right now (/proc/loadavg, Linux) and stays serial
unless enough cores are idle. numba.get_num_threads() is per calling thread, so a scheduler that runs kernels on
several threads can set it to 1 in its workers.
"""
from __future__ import annotations

import os

import numba


def runnable_tasks() -> int | None:
    """Tasks running or ready to run at this moment, this one included (None if the system does not say)."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def cores() -> int:
    """The cores this process may run on (not every core of the host, under affinity limits)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def use_threads(work: int, min_work: int) -> bool:
    """Whether a kernel with `work` (in its own units) at or above `min_work` should run on several threads now."""
    threads = numba.get_num_threads()
    if threads < 2 or work < min_work:
        return False
    busy = runnable_tasks()
    return busy is None or busy - 1 + threads <= cores()
