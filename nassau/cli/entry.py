"""The console script `nassau` and `python -m nassau`: process-wide settings, then the command line.

The command line's imports build over 100,000 objects the cyclic collector tracks (numba's above all), alive as long
as the process. The collector walked them over and over while they were built, and again in every full collection
after: so the collector is kept off while they are imported and what they built is frozen (never examined again).
That is a choice for the whole process, made here, by the entry point, and not by any module on import; a program
that imports nassau as a library keeps its collector as it is. So is fp.kernel_loading (cached kernels load without
readying numba's compiler: 0.23 s of a small run), installed here too. And numba's configuration is read without
PyYAML: numba imports it (15-25 ms here, every run) only to read a `.numba_config.yaml` in the working directory,
which nassau neither writes nor needs (its NUMBA_* environment variables are read as always); yaml stays
importable for whatever asks for it later (Dask, for --workers and --cluster). And numpy is told not to ask for
transparent huge pages for its large arrays (NUMPY_MADVISE_HUGEPAGE=0, unless the caller set it): where the system
grants them on request with direct compaction (Debian's default, `defrag` = madvise), each large zeroed array a step
makes waits for the kernel to compact memory; S_2 over A^C through stem 70, one thread, on the 2-core EPYC took
8.6 s of system time against 2.2 s without, 63.5 s of CPU against 57.1.
"""
from __future__ import annotations

import gc
import os
import sys
from types import ModuleType


def load() -> ModuleType:
    """Import the command line (nassau.cli.main) with the collector off, freeze what the imports built, and turn the
    collector back on if it was on."""
    if "numpy" not in sys.modules:  # read once, when numpy is imported
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    collecting = gc.isenabled()
    gc.disable()
    hidden = "yaml" not in sys.modules and "numba" not in sys.modules
    if hidden:
        sys.modules["yaml"] = None  # numba.core.config's `import yaml` fails: no .numba_config.yaml is read
    try:
        from fp import kernel_loading
        from nassau.cli import main as commands

        kernel_loading.install()
    finally:
        if hidden and sys.modules.get("yaml", 0) is None:
            del sys.modules["yaml"]
        gc.freeze()
        if collecting:
            gc.enable()
    return commands


def main(argv: list[str] | None = None) -> int:
    return load().main(argv)
