"""The resident admissible master: every left factor R's admissible matrices, kept on the device.

Why resident: a matrix set depends on R alone and R recurs across every product batch, so it is uploaded once
per process (REFERENCE 1.5: the reference keeps 1.5 GB at stem 150 rather than re-enumerate). The host
keeps only the index, R word -> slot, and each slot's matrix count (for the launch prefix sums).

Layout on the device: `mats`, one 64-byte record per matrix (uint16: MAX_COLS column sums, MAX_DIAG
anti-diagonal ORs, padding), and `index`, one (start, count) int64 pair per slot. Both are append-only: new
rows are copied into the tail in place; when the capacity runs out it doubles, which moves the buffer, so
the doubling takes the master's lock exclusively and every launch that reads the master holds it shared.
A buffer never reaches 2^32 elements (a 32-bit length would silently truncate it): past the cap the master
refuses with MasterFullError and the caller computes on the CPU.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from gpu import counters
from gpu.device import Device
from gpu.errors import MasterFullError
from gpu.layout import MAT_WIDTH, MAX_COLS, MAX_DIAG, records
from gpu.lock import SharedExclusiveLock

#: Elements one device buffer may hold: below 2^32.
MAX_ELEMENTS = (1 << 32) - 1
INITIAL_ROWS = 1024


class DeviceBuffer:
    """An append-only (rows, width) device array that grows in place and doubles when full."""

    def __init__(self, device: Device, dtype: type, width: int, lock: SharedExclusiveLock,
                 max_elements: int = MAX_ELEMENTS, initial_rows: int = INITIAL_ROWS) -> None:
        self.device = device
        self.width = width
        self.max_rows = max_elements // width
        if self.max_rows < 1:
            raise ValueError(f"a cap of {max_elements} elements holds no row of width {width}")
        self._lock = lock
        self.array = device.xp.zeros((min(initial_rows, self.max_rows), width), dtype=dtype)
        self.used = 0
        self.doublings = 0

    @property
    def capacity(self) -> int:
        return int(self.array.shape[0])

    def reserve(self, rows: int) -> None:
        """Make room for `rows` more rows (doubling under the exclusive lock), or raise MasterFullError."""
        need = self.used + rows
        if need > self.max_rows:
            raise MasterFullError(f"the resident master would need {need} rows of {self.width} elements, over "
                                  f"its cap of {self.max_rows} rows (< 2^32 elements per buffer)")
        if need <= self.capacity:
            return
        capacity = min(max(need, 2 * self.capacity), self.max_rows)
        with self._lock.exclusive():
            grown = self.device.xp.zeros((capacity, self.width), dtype=self.array.dtype)
            grown[: self.used] = self.array[: self.used]
            self.device.fence()
            self.array = grown
            self.doublings += 1
        counters.debug(f"master buffer of width {self.width} grown to {capacity} rows")

    def append(self, rows: np.ndarray) -> int:
        """Copy host `rows` into the tail (after `reserve`); return the index of the first one."""
        first = self.used
        self.reserve(len(rows))
        self.device.upload_into(self.array[first:first + len(rows)], rows)
        self.used = first + len(rows)
        return first


class ResidentMaster:
    """R word -> device slot, over append-only device buffers of admissible matrices."""

    def __init__(self, device: Device, max_elements: int = MAX_ELEMENTS, initial_rows: int = INITIAL_ROWS) -> None:
        self.device = device
        self.lock = SharedExclusiveLock()
        self._append_lock = threading.Lock()
        self.mats = DeviceBuffer(device, np.uint16, MAT_WIDTH, self.lock, max_elements, initial_rows)
        self.index = DeviceBuffer(device, np.int64, 2, self.lock, max_elements, initial_rows)
        self.slot_of: dict[int, int] = {}
        self._counts = np.zeros(initial_rows, dtype=np.int64)

    def ensure(self, row_r: np.ndarray, row_slot: np.ndarray, start: np.ndarray, count: np.ndarray,
               cs: np.ndarray, mk: np.ndarray) -> np.ndarray:
        """Upload the matrices of every R not yet resident; return each row's device slot.

        row_slot indexes the host master (start, count, cs, mk) that the caller enumerated for row_r.
        """
        if cs.shape[1:] != (MAX_COLS,) or mk.shape[1:] != (MAX_DIAG,):
            raise ValueError(f"cs/mk must have {MAX_COLS}/{MAX_DIAG} columns, got {cs.shape} and {mk.shape}")
        words, first, inverse = np.unique(row_r, return_index=True, return_inverse=True)
        with self._append_lock:
            slots = np.array([self.slot_of.get(w, -1) for w in words.tolist()], dtype=np.int64)
            missing = np.flatnonzero(slots < 0)
            if len(missing):
                slots[missing] = self._upload(row_slot[first[missing]], start, count, cs, mk)
                for w, s in zip(words[missing].tolist(), slots[missing].tolist()):
                    self.slot_of[w] = s
        return slots[inverse.reshape(-1)]

    def _upload(self, host_slots: np.ndarray, start: np.ndarray, count: np.ndarray, cs: np.ndarray,
                mk: np.ndarray) -> np.ndarray:
        """Append the matrices of the given host slots as one record block; return their device slots."""
        n_each = count[host_slots].astype(np.int64)
        total = int(n_each.sum())
        begins = np.cumsum(n_each) - n_each
        rows = np.repeat(start[host_slots] - begins, n_each) + np.arange(total)
        block = records(cs[rows], mk[rows])
        # Reserve both buffers first, so a refusal leaves nothing half-appended.
        self.mats.reserve(total)
        self.index.reserve(len(host_slots))
        first_row = self.mats.append(block)
        first_slot = self.index.append(np.stack([first_row + begins, n_each], axis=1))
        self.device.fence()
        slots = first_slot + np.arange(len(host_slots), dtype=np.int64)
        if self.index.used > len(self._counts):
            self._counts = np.concatenate([self._counts, np.zeros(max(self.index.used, len(self._counts)),
                                                                  dtype=np.int64)])
        self._counts[slots] = n_each
        counters.add("master_matrices", total)
        counters.debug(f"master: +{len(host_slots)} R, +{total} matrices ({block.nbytes} bytes)")
        return slots

    def counts(self, slots: np.ndarray) -> np.ndarray:
        """Matrices per device slot."""
        return self._counts[slots]

    @contextmanager
    def reading(self) -> Iterator[tuple[Any, Any]]:
        """(mats, index) device arrays, not moved until the block ends (its launches must finish inside it)."""
        with self.lock.shared():
            try:
                yield self.mats.array, self.index.array
            finally:
                self.device.fence()

    @property
    def num_matrices(self) -> int:
        return self.mats.used


def resident(device: Device) -> ResidentMaster:
    """The device's process-wide master."""
    return device.state("master", lambda: ResidentMaster(device))
