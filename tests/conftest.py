"""Shared pytest configuration: the gpu marker skips with a reason when no device answers; one replayable rng."""
from __future__ import annotations

import os

import numpy as np
import pytest


def _device_answers() -> str | None:
    """Return None when CuPy imports and a CUDA device answers, else the reason it does not."""
    try:
        import cupy  # noqa: F401
    except Exception as exc:  # ImportError, or a broken CUDA install
        return f"CuPy is not importable ({exc.__class__.__name__})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device"
    except Exception as exc:
        return f"no CUDA device answers ({exc.__class__.__name__})"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = None
    for item in items:
        if "gpu" in item.keywords:
            if reason is None:
                reason = _device_answers() or ""
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


#: Set to a seed printed by a failing test to replay it: NASSAU_TEST_SEED=123 pytest tests/test_x.py::test_y
SEED_VARIABLE = "NASSAU_TEST_SEED"


@pytest.fixture
def rng() -> np.random.Generator:
    """A generator on a fresh seed each run (or on $NASSAU_TEST_SEED); the seed is printed, so pytest shows it
    beside a failure together with the command that replays it."""
    given = os.environ.get(SEED_VARIABLE)
    seed = int(given) if given else int.from_bytes(os.urandom(8), "little")
    print(f"random seed: {seed} (replay: {SEED_VARIABLE}={seed})")
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _tables_not_deferred(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process CLI run on a cold kernel cache starts the first-run helper, which defers product tables in this
    process until it is done (algebra.milnor.warmup); each test starts undeferred, whatever ran before it."""
    from algebra.milnor import warmup

    monkeypatch.setattr(warmup, "_pending", None)
