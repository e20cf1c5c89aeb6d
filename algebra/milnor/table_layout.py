"""How product tables are laid out while they are filled, shared by the p = 2 filler (product_tables._fill) and the
odd-prime one (odd_kernels.fill_odd_tables): per key (S, deg R) one row offset per R of that degree and one more,
and the entries of every table in one growing array."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def table_starts(keys_n, flat_offset):
    """For keys whose left factors have degrees keys_n: where each key's row offsets start (dim A_n + 1 each), the
    row offsets to fill (32 bits, narrowed as the tables are kept), where each key's entries start (to fill), and
    an entries array to grow (append)."""
    nkeys = keys_n.shape[0]
    row_start = np.zeros(nkeys + 1, dtype=np.int64)
    for j in range(nkeys):
        n = keys_n[j]
        row_start[j + 1] = row_start[j] + flat_offset[n + 1] - flat_offset[n] + 1
    row_off = np.empty(row_start[nkeys], dtype=np.uint32)
    res_start = np.zeros(nkeys + 1, dtype=np.int64)
    entries = np.empty(max(1024, 2 * row_start[nkeys]), dtype=np.uint16)
    return row_start, row_off, res_start, entries


@njit(cache=True, nogil=True, inline="always")
def append(entries, used, value):
    """entries with value at `used` (doubled first when full); returns (entries, used + 1)."""
    if used == entries.shape[0]:
        grown = np.empty(2 * used, dtype=np.uint16)
        for i in range(used):  # a loop, not grown[:used] = entries: a slice assignment compiles numba's shape-
            grown[i] = entries[i]  # mismatch message (string formatting, 2.0 s of a first run)
        entries = grown
    entries[used] = value
    return entries, used + 1
