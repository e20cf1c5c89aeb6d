"""The data layouts the kernels are compiled for: packed Milnor p-parts and admissible-matrix records.

These are wire formats owned by `algebra` (ppart.py, admissible.py). `gpu` may not import `algebra`, so the
numbers are restated here, once, and a test checks them against algebra's. The kernels get them as a
header of #defines (`header`) put in front of their source, so the CUDA source has no second copy.
"""
from __future__ import annotations

import numpy as np

#: Exponent fields of a packed p-part: r_{i+1} = (word >> FIELD_SHIFT[i]) & FIELD_MASK[i].
FIELD_SHIFT = (0, 11, 21, 30, 38, 45, 51, 56, 60, 63)
FIELD_BITS = (11, 10, 9, 8, 7, 6, 5, 4, 3, 1)
MAX_LEN = len(FIELD_SHIFT)
#: deg xi_i = 2^i - 1.
XI_DEGREES = tuple((1 << i) - 1 for i in range(1, MAX_LEN + 1))
#: Per admissible matrix: MAX_COLS column sums, then MAX_DIAG anti-diagonal ORs (algebra.milnor.admissible_master).
MAX_COLS = 11
MAX_DIAG = MAX_LEN + MAX_COLS
#: Device record of one matrix: cs then mk, uint16, padded to 32 entries (64 bytes, aligned loads).
MAT_WIDTH = 32

FIELD_MASK = np.array([(1 << b) - 1 for b in FIELD_BITS], dtype=np.uint64)


def header() -> str:
    """#define lines that give the CUDA sources the layout above (a header, not -D options: nvcc splits
    option values at commas)."""
    defines = {
        "NASSAU_MAX_LEN": MAX_LEN,
        "NASSAU_MAX_COLS": MAX_COLS,
        "NASSAU_MAX_DIAG": MAX_DIAG,
        "NASSAU_MAT_WIDTH": MAT_WIDTH,
        "NASSAU_FIELD_SHIFTS": ", ".join(map(str, FIELD_SHIFT)),
        "NASSAU_FIELD_BITS": ", ".join(map(str, FIELD_BITS)),
        "NASSAU_XI_DEGREES": ", ".join(map(str, XI_DEGREES)),
    }
    return "".join(f"#define {k} {v}\n" for k, v in defines.items())


def records(cs: np.ndarray, mk: np.ndarray) -> np.ndarray:
    """Device records (n, MAT_WIDTH) uint16 of n matrices given as algebra's cs (n, MAX_COLS) and mk (n, MAX_DIAG)."""
    out = np.zeros((len(cs), MAT_WIDTH), dtype=np.uint16)
    out[:, :MAX_COLS] = cs
    out[:, MAX_COLS:MAX_COLS + MAX_DIAG] = mk
    return out
