"""Cached kernels load without numba's compiler context being readied (fp.kernel_loading), in fresh processes."""
from __future__ import annotations

import subprocess
import sys

from fp import kernel_loading

#: Lowering modules numba's refresh imports and nothing of ours needs to load a kernel.
LOWERING = ("numba.np.linalg", "numba.np.arraymath", "numba.typed.listobject", "numba.np.random.generator_core")

RUN = f"""
import sys
import numpy as np
import nassau
from fp import m4ri, random_matrix
ext = nassau.resolve("S_2", stem=20, max_s=6, threads=1, progress=False)
rng = np.random.default_rng(7)
a = random_matrix(700, 3000, rng)
b = a.copy()
serial, threaded = m4ri.row_reduce(a, 3000, parallel=False), m4ri.row_reduce(b, 3000, parallel=True)
assert np.array_equal(serial, threaded) and np.array_equal(a, b)
print(sorted(m for m in {LOWERING!r} if m in sys.modules))
print(ext.text().split(chr(10))[-3])
"""

COMPILE_AFTER = """
import numpy as np
from numba import njit
from fp import kernel_loading, m4ri, random_matrix
kernel_loading.install()
a = random_matrix(64, 64, np.random.default_rng(1))
m4ri.row_reduce(a, 64, parallel=False)

@njit
def fresh(n, generator):
    return np.cumsum(np.arange(n))[-1], str(n), generator.integers(0, 1)

print(fresh(4, np.random.default_rng(4)))
"""


def _python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_a_warm_run_loads_kernels_without_numbas_lowering_modules() -> None:
    """A run on a warm cache (the first one here warms it) imports none of the lowering modules numba's refresh
    would (a revert imports all 63), and its kernels work: a resolution, and the threaded reduction equal to the
    serial one. On a numba newer than fp.kernel_loading knows, numba's own loading runs (and imports them). The
    run goes through nassau.resolve, the public name whose first use installs the patch."""
    light = kernel_loading.install()  # False only on a numba it was not written for: numba's own loading then
    assert light or kernel_loading._version() >= kernel_loading.SUPPORTED[1]
    _python(RUN)
    lines = _python(RUN).splitlines()
    assert lines[0] == ("[]" if light else str(sorted(LOWERING)))
    assert lines[1].strip() == "·"  # s = 0 of S_2's chart: the unit alone


def test_a_compilation_after_a_light_load_still_readies_the_compiler() -> None:
    """A kernel compiled after cached ones were loaded without the refresh compiles and runs (numba's compiler
    refreshes the context itself): here one calling np.cumsum, str and numpy's Generator, whose lowerings the refresh
    registers."""
    assert _python(COMPILE_AFTER).strip() == "(6, '4', 0)"
