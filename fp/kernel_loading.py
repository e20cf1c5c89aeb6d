"""Loading a cached kernel without first readying numba's compiler for a compilation that does not happen: a patch
of numba's internals, kept because it pays for the debt.

Before numba loads a kernel from its cache it refreshes the CPU target context (numba.core.caching.Cache.
load_overload): that imports every lowering module numba has (63 of them: numba.np.linalg, numba.cpython.unicode,
numba.typed, ...) and registers their implementations, which only a compilation reads. Loading object code needs
numba's runtime (NRT) alone, so here it initializes that and loads. Measured on S_3 through stem 40: 10 MiB less
memory allocated by the run (50 against 60 MiB anonymous) and 0.07-0.10 s off its first resolution. A compilation
still refreshes first, since numba's compiler does so itself whenever it starts (CompilerBase).

Measured again on 2026-12-03 (2-core Xeon, warm cache, `nassau resolve S_2 --stem 40 --quiet`, 10 runs each,
alternating): 1.55 s median with the patch against 1.78 s without (0.23 s, 13% of a small run, on every run of
every command) and 146 against 156 MiB peak. Written against numba 0.59-0.68 (tested on 0.68.1): elsewhere, or
where Cache lacks the parts this calls, numba keeps its own load_overload, so an upgrade costs that time, never a
result. Installed by the entry points (the console script, nassau.cli.entry; the package's public names,
nassau.__getattr__), not on import: it changes numba for the whole process. It also drops numba's "numba:llvm_lock"
events (see _llvm_lock_unobserved): 0.127 -> 0.110 s of CPU loading the 17 kernels of S_2 through stem 40 (2-core
AMD EPYC, AVX2, loaded, best of 6).
"""
from __future__ import annotations

import numba

#: numba versions whose Cache.load_overload is "refresh, then _load_overload under the I/O guard".
SUPPORTED = ((0, 59), (0, 69))


def _version() -> tuple[int, int]:
    major, minor = numba.__version__.split(".")[:2]
    return int(major), int(minor)


def install() -> bool:
    """Make numba load cached kernels without the refresh; whether it now does."""
    from numba.core import caching
    from numba.core.runtime import nrt

    cache = caching.Cache
    if getattr(cache.load_overload, "without_refresh", False):
        return True
    if not (SUPPORTED[0] <= _version() < SUPPORTED[1] and hasattr(cache, "_load_overload")
            and hasattr(cache, "_guard_against_spurious_io_errors") and hasattr(nrt.rtsys, "initialize")):
        return False

    def load_overload(self, sig, target_context):
        nrt.rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    load_overload.without_refresh = True
    cache.load_overload = load_overload
    _llvm_lock_unobserved()
    return True


def _llvm_lock_unobserved() -> int:
    """Drop the callbacks numba.core.base hangs on llvmlite's lock, which broadcast a "numba:llvm_lock" event (two
    listener dispatches) around every call into LLVM: about 3700 calls as a run loads its 17 kernels (S_2 through
    stem 40), and all the events feed is the `llvm_lock` timer in a compilation's metadata, read by nothing of ours
    (nassau.engine.compile_time listens to "numba:compiler_lock"). How many were dropped."""
    from llvmlite.binding import ffi

    lock = getattr(getattr(ffi, "lib", None), "_lock", None)
    callbacks = getattr(lock, "_cblist", None)
    if not isinstance(callbacks, list):
        return 0
    numbas = [cb for cb in callbacks if getattr(cb[0], "__qualname__", "").startswith("_initialize_llvm_lock_event")]
    for cb in numbas:
        callbacks.remove(cb)
    return len(numbas)
