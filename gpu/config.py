"""The GPU knobs, read from the environment once and checked: a bad value fails loudly, naming the variable.

Every knob follows the reference fork's name (REFERENCE 7) so that runs can be compared. The parsed
configuration is a frozen value: `load` reads a mapping (tests pass their own), `current` caches the one
read from `os.environ` until `reset`.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Mapping

MB = 1 << 20


@dataclass(frozen=True)
class GpuConfig:
    """What the environment asks of the GPU path."""

    mode: str  # "auto" | "0" | "1"
    verify: bool
    debug: bool
    min_work: int  # cells (rows x cols) below which a product batch stays on the CPU
    block_bytes: int  # output bytes of one product launch
    budget_bytes: int  # device output bytes admitted at once
    streams: int
    rref_min: int  # min(rows, cols) from which a row reduction goes to the device


def _flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip()
    if raw in ("", "0"):
        return False
    if raw == "1":
        return True
    raise ValueError(f"{name} must be 0 or 1, got {raw!r}")


def _number(env: Mapping[str, str], name: str, default: float, minimum: int) -> int:
    """An integer knob; scientific notation (4e6) is accepted when it denotes a whole number."""
    raw = env.get(name, "").strip()
    if raw == "":
        return int(default)
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if value != value or value in (float("inf"), float("-inf")) or value != int(value):
        raise ValueError(f"{name} must be a whole number, got {raw!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {raw!r}")
    return int(value)


def load(env: Mapping[str, str]) -> GpuConfig:
    """Parse the NASSAU_GPU* variables of `env` (ValueError naming the variable on a bad value)."""
    mode = env.get("NASSAU_GPU", "auto").strip().lower() or "auto"
    if mode not in ("auto", "0", "1"):
        raise ValueError(f"NASSAU_GPU must be auto, 0 or 1, got {env['NASSAU_GPU']!r}")
    return GpuConfig(
        mode=mode,
        verify=_flag(env, "NASSAU_GPU_VERIFY"),
        debug=_flag(env, "NASSAU_GPU_DEBUG"),
        min_work=_number(env, "NASSAU_GPU_MIN_WORK", 4e6, 0),
        block_bytes=_number(env, "NASSAU_GPU_BLOCK_MB", 512, 1) * MB,
        budget_bytes=_number(env, "NASSAU_GPU_MEM_BUDGET_MB", 4096, 1) * MB,
        streams=_number(env, "NASSAU_GPU_STREAMS", 1, 1),
        rref_min=_number(env, "NASSAU_GPU_RREF_MIN", 8192, 1),
    )


@functools.lru_cache(maxsize=1)
def current() -> GpuConfig:
    """The configuration of this process's environment (cached; `reset` re-reads it)."""
    return load(os.environ)


def reset() -> None:
    """Forget the cached configuration (tests that change the environment call this)."""
    current.cache_clear()
