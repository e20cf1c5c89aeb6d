"""The way a run's workers take when the user names none (nassau.cost.way): worker processes where the estimate says
they are faster than threads, threads for a small run, one worker, an unstable run, and wherever the user said so;
the chart is the same either way."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nassau.api.request import request
from nassau.cost import calibration
from tests.helpers import run_cli

#: Machine constants that make S_2 through stem 60 (s <= 20) a run of about ten seconds on one worker.
SLOW_MACHINE = {"coefficients": [5e-3, 1e-6, 1e-3, 1e-7], "startup_s": 0.5, "floor_bytes": 150e6,
                "calibrated_on": "a test", "seconds": 1.0, "residual": 0.0, "load_average": 0.0, "date": "today"}


@pytest.fixture
def two_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cores to run on, and a cost cache of the test's own with SLOW_MACHINE's constants (no calibration)."""
    monkeypatch.setenv("NASSAU_COST_DIR", str(tmp_path / "cost"))
    for step in ("nassau", "standard"):
        path = calibration._machine_path("2", step)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(SLOW_MACHINE))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})


def test_processes_by_default_where_the_estimate_says_they_are_faster(two_cores: None) -> None:
    assert request("S_2", 60, max_s=20, threads=2, processes=None).processes is True
    assert request("S_2", 60, max_s=20, threads=2, processes=False).processes is False  # the user's word wins
    assert request("S_2", 60, max_s=20, threads=1, processes=None).processes is False
    assert request("S_2", 30, max_s=10, threads=2, processes=None).processes is False  # within the probe: small
    assert request("S_2[5]", 30, max_s=10, threads=2, processes=None, unstable=True).processes is False


def test_the_command_lines_default_runs_processes_and_draws_the_same_chart(two_cores: None) -> None:
    args = ("resolve", "S_2", "--stem", "60", "--max-s", "20", "--threads", "2")
    assert "(nassau, 2 processes)" in run_cli(*args, "--estimate").stdout.decode()
    assert "(nassau, 2 threads)" in run_cli(*args, "--estimate", "--no-processes").stdout.decode()
    default = run_cli(*args)
    assert "2 processes" in default.stderr.decode().splitlines()[-1]
    threads = run_cli(*args, "--no-processes")
    assert "2 threads" in threads.stderr.decode().splitlines()[-1]
    assert default.stdout == threads.stdout
