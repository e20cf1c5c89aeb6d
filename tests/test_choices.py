"""What a run takes when the user names none, by predicted cost (nassau.cost.choices): worker processes where the
estimate says they are faster than threads (threads for a small run, one worker, an unstable run, and wherever the
user said so; the chart is the same either way), and for --algorithm auto the faster of Nassau's algorithm and the
standard one (a resumed run keeps its save directory's)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nassau.api.request import request
from nassau.cost import calibration, choices
from nassau.cost.budget import TABLES_SHARE, fits
from nassau.cost.memory import SHRINK_AT
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



def test_one_thread_by_default_for_a_run_too_small_to_share_the_cores(two_cores: None, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads not named: one within the probe's stems, and beyond them where the estimate's work is under
    SMALL_RUN_S (two threads took 1.3x one thread's wall there); the cores for a longer run; named threads kept."""
    assert request("S_2", 30, max_s=10, processes=None).threads == 1
    assert request("S_2", 30, max_s=10, threads=2, processes=None).threads == 2
    assert request("S_2", 60, max_s=20, processes=None).threads == 2  # about ten seconds on SLOW_MACHINE
    assert request("S_2", 60, max_s=20, processes=True).threads == 2  # processes need their workers
    fast = calibration._machine_path("2", "nassau")
    fast.write_text(json.dumps(dict(SLOW_MACHINE, coefficients=[5e-5, 1e-8, 1e-5, 1e-9])))
    small = request("S_2", 60, max_s=20, processes=None)
    assert small.threads == 1 and small.processes is False and small.estimate().wall_s < 5.0
    assert "(nassau, 1 thread)" in run_cli("resolve", "S_2", "--stem", "30", "--estimate").stdout.decode()


def test_a_request_makes_each_estimate_once(two_cores: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """S_2 through stem 60, beyond its probe, nothing named: the algorithm's choice, the threads' and the way's all
    read Nassau's estimate on two threads, which is made once: three estimates in all, with the standard
    algorithm's and the processes'."""
    made = []
    real = choices.fitted

    def counting(*args, **kwargs):
        made.append(args[3:6])
        return real(*args, **kwargs)

    monkeypatch.setattr(choices, "fitted", counting)
    req = request("S_2", 60, max_s=20, processes=None)
    assert req.threads == 2 and req.algorithm == "nassau"
    assert sorted(made) == [("nassau", 2, False), ("nassau", 2, True), ("standard", 2, False)]


def test_threads_by_default_where_the_budget_caps_the_tables(two_cores: None) -> None:
    """A budget that leaves the product tables 95% of what they would fill: the processes' estimate is still the
    faster, but threads are taken, which can evict their tables as the run nears its budget (the processes share
    theirs and cannot)."""
    whole = request("S_2", 60, max_s=20, threads=2, processes=True, memory="64G").estimate()
    rest = whole.peak_bytes - whole.tables_bytes
    budget = int((rest + 0.95 * whole.tables_bytes / TABLES_SHARE) / SHRINK_AT)  # the rest whole, 95% of the tables
    capped = request("S_2", 60, max_s=20, threads=2, processes=True, memory=budget).estimate()
    assert capped.tables_capped and fits(capped, budget)
    assert capped.wall_s < request("S_2", 60, max_s=20, threads=2, processes=False, memory=budget).estimate().wall_s
    assert request("S_2", 60, max_s=20, threads=2, processes=None, memory=budget).processes is False


def test_the_command_lines_default_runs_processes_and_draws_the_same_chart(two_cores: None) -> None:
    args = ("resolve", "S_2", "--stem", "60", "--max-s", "20", "--threads", "2")
    assert "(nassau, 2 processes)" in run_cli(*args, "--estimate").stdout.decode()
    assert "(nassau, 2 threads)" in run_cli(*args, "--estimate", "--no-processes").stdout.decode()
    default = run_cli(*args)
    assert "2 processes" in default.stderr.decode().splitlines()[-1]
    threads = run_cli(*args, "--no-processes")
    assert "2 threads" in threads.stderr.decode().splitlines()[-1]
    assert default.stdout == threads.stdout


def _machines(monkeypatch: pytest.MonkeyPatch, where: Path, nassau: float, standard: float) -> None:
    """A cost cache with odd-prime constants that make a job of Nassau's and of the standard step cost these."""
    monkeypatch.setenv("NASSAU_COST_DIR", str(where))
    for step, c in (("nassau", nassau), ("standard", standard)):
        path = calibration._machine_path("odd", step)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(SLOW_MACHINE, coefficients=[c, 0.0, 0.0, 0.0])))


def test_auto_takes_the_algorithm_the_estimate_says_is_faster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _machines(monkeypatch, tmp_path / "a", nassau=2e-3, standard=1e-3)
    assert request("S_3", 150, max_s=20, threads=1).algorithm == "standard"
    assert request("S_3", 150, max_s=20, threads=1, algorithm="nassau").algorithm == "nassau"  # named: kept
    assert request("S_3", 60, max_s=10, threads=1).algorithm == "nassau"  # within the probe: Nassau's
    _machines(monkeypatch, tmp_path / "b", nassau=1e-3, standard=2e-3)
    assert request("S_3", 150, max_s=20, threads=1).algorithm == "nassau"


def test_a_resumed_auto_run_keeps_its_save_directorys_algorithm(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that the estimate would now give the standard step resumes a save directory made by Nassau's (a
    directory of another algorithm would be refused)."""
    _machines(monkeypatch, tmp_path / "cost", nassau=1e-3, standard=2e-3)
    save = tmp_path / "save"
    request("S_3", 100, max_s=10, threads=1, save_dir=save).run()
    _machines(monkeypatch, tmp_path / "cost2", nassau=2e-3, standard=1e-3)
    assert request("S_3", 150, max_s=20, threads=1).algorithm == "standard"
    assert request("S_3", 150, max_s=20, threads=1, save_dir=save).algorithm == "nassau"
