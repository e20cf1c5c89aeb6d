"""Flat, prefix-summed marshal buffers for one launch over all products of a batch, and its row blocks.

Thread decomposition (the contract between milnor.cu, its numpy twin and this planner): row i of the batch
has nterms(i) x ceil(count(R_i) / group) threads; thread t belongs to the row i with
prefix[i] <= t < prefix[i + 1] (a binary search), and within the row to term  within // groups  and to the
group of matrices  within % groups, where within = t - prefix[i]. Consecutive threads thus walk one term's
matrices in order (coalesced record loads). Only per-row arrays are built, with vectorised numpy: nothing is
allocated per product.

A batch is split into launches by thread ranges, not whole rows: each launch covers fewer than `max_threads`
threads (< 2^32) and rows whose output fits `block_bytes` (NASSAU_GPU_BLOCK_MB). A row cut between two
launches gets part of its terms in each; both partial outputs are XORed into the row, which is exact over F2.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Admissible matrices per thread.
GROUP = 4
#: Threads of one launch: below 2^32.
MAX_THREADS = (1 << 32) - 1


@dataclass(frozen=True)
class Launch:
    """Threads [thread0, thread1) of the batch, touching output rows [row0, row1)."""

    row0: int
    row1: int
    thread0: int
    thread1: int

    @property
    def threads(self) -> int:
        return self.thread1 - self.thread0

    @property
    def rows(self) -> int:
        return self.row1 - self.row0


def row_threads(row_terms: np.ndarray, term_start: np.ndarray, row_counts: np.ndarray, group: int) -> np.ndarray:
    """Threads per row: its number of terms times its groups of matrices."""
    nterms = term_start[row_terms + 1] - term_start[row_terms]
    return nterms.astype(np.int64) * ((row_counts.astype(np.int64) + group - 1) // group)


def prefix(counts: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum with the total appended (int64, len(counts) + 1)."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def find_rows(row_prefix: np.ndarray, row0: int, row1: int, threads: np.ndarray) -> np.ndarray:
    """For each thread t, the largest row i in [row0, row1) with prefix[i] <= t (the kernel's binary search)."""
    return row0 + np.searchsorted(row_prefix[row0:row1], threads, side="right") - 1


def split(row_prefix: np.ndarray, row_bytes: int, block_bytes: int, max_threads: int = MAX_THREADS) -> list[Launch]:
    """Cut the batch's threads into launches under `max_threads` threads and `block_bytes` of output rows.

    A single row wider than block_bytes still gets a launch of its own (one row is the smallest output).
    """
    nrows = len(row_prefix) - 1
    total = int(row_prefix[-1])
    rows_cap = max(1, block_bytes // max(1, row_bytes))
    launches = []
    t = 0
    while t < total:
        row0 = int(find_rows(row_prefix, 0, nrows, np.array([t]))[0])
        end = min(t + max_threads, int(row_prefix[min(row0 + rows_cap, nrows)]))
        row1 = int(find_rows(row_prefix, 0, nrows, np.array([end - 1]))[0]) + 1
        launches.append(Launch(row0, row1, t, end))
        t = end
    return launches


def decode(row_prefix: np.ndarray, row_terms: np.ndarray, term_start: np.ndarray, row_counts: np.ndarray,
           group: int, threads: np.ndarray, row0: int = 0, row1: int | None = None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, term, first matrix within R) of each thread, exactly as the kernel decodes them."""
    rows = find_rows(row_prefix, row0, len(row_prefix) - 1 if row1 is None else row1, threads)
    groups = (row_counts[rows] + group - 1) // group
    within = threads - row_prefix[rows]
    terms = term_start[row_terms[rows]] + within // groups
    return rows, terms, (within % groups) * group


@dataclass(frozen=True)
class Flat:
    """Several integer arrays as int64 in one host buffer (one upload), with each one's place in it.

    uint64 arrays keep their bits (reinterpret the device slice with .view); narrower integers are widened.
    """

    data: np.ndarray
    places: dict[str, tuple[int, int]]

    @staticmethod
    def pack(**arrays: np.ndarray) -> "Flat":
        places, parts, at = {}, [], 0
        for name, arr in arrays.items():
            a = np.ascontiguousarray(arr).reshape(-1)
            if a.dtype.kind not in "iu":
                raise ValueError(f"{name} must hold integers, got {a.dtype}")
            parts.append(a.view(np.int64) if a.dtype == np.uint64 else a.astype(np.int64, copy=False))
            places[name] = (at, len(a))
            at += len(a)
        data = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return Flat(data, places)

    def views(self, device_data: Any) -> dict[str, Any]:
        """Each array as a slice of the uploaded buffer (int64; reinterpret with .view where needed)."""
        return {name: device_data[at:at + n] for name, (at, n) in self.places.items()}
