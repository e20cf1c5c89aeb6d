"""What the GPU path did: launches, bytes moved, device row reductions, the device pool's peak.

Tests read these to prove a path ran (a parity test cannot see a silent fallback to the CPU), and with
NASSAU_GPU_DEBUG=1 every upload and launch is also written to stderr, and a one-line summary when the
process exits (the benchmarks parse that line). Only under NASSAU_GPU_DEBUG=1 are the kernels' and the copies'
nanoseconds counted too (summed over threads; gpu.device waits for the stream around each, which costs time).
"""
from __future__ import annotations

import atexit
import sys
import threading

from gpu import config

NAMES = ("launches", "bytes_uploaded", "bytes_downloaded", "device_rrefs", "device_batches", "master_matrices",
         "peak_pool_bytes", "kernel_ns", "upload_ns", "download_ns")
SUMMARY_PREFIX = "nassau.gpu summary:"

_lock = threading.Lock()
_counts = dict.fromkeys(NAMES, 0)
_summary_registered = False


def add(name: str, amount: int = 1) -> None:
    with _lock:
        _counts[name] += int(amount)


def peak(name: str, value: int) -> None:
    """Raise counter `name` to `value` if it is larger (a high-water mark)."""
    with _lock:
        _counts[name] = max(_counts[name], int(value))


def snapshot() -> dict[str, int]:
    with _lock:
        return dict(_counts)


def reset() -> None:
    with _lock:
        for name in NAMES:
            _counts[name] = 0


def debug(message: str) -> None:
    """Write one debug line to stderr when NASSAU_GPU_DEBUG is on (and arrange the exit summary once)."""
    global _summary_registered
    if not config.current().debug:
        return
    print(f"nassau.gpu: {message}", file=sys.stderr, flush=True)
    with _lock:
        if _summary_registered:
            return
        _summary_registered = True
    atexit.register(_print_summary)


def summary_line() -> str:
    return SUMMARY_PREFIX + " " + " ".join(f"{k}={v}" for k, v in snapshot().items())


def _print_summary() -> None:
    print(summary_line(), file=sys.stderr, flush=True)
