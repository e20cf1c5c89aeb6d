"""Motivic runs on Dask workers (`--motivic --workers N`, `--cluster ADDRESS`) over a shared save directory.

The sphere over A^C and C(tau) give one thread's chart, JSON and saved files byte for byte; the worker function
alone, in this process, gives the same files for any split of the jobs between workers, a step over A^C reading the
kernel the step below it saved where another worker ran that one. Each Dask test starts a local cluster of 2 worker
processes (a few seconds).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nassau.api.motivic import motivic_request, run_motivic
from nassau.engine.resolve import dependencies
from nassau.store import cluster
from nassau.store.motivic_save import MotivicSave
from tests.helpers import assert_one_line_error, run_cli, saved_runs

pytest.importorskip("distributed", reason="the cluster tests need dask[distributed] (the test extra)")

RUNS = {"S_2": ["resolve", "S_2", "--motivic", "--stem", "30", "--max-s", "12"],
        "Ctau": ["resolve", "Ctau", "--motivic", "--stem", "40", "--max-s", "16"]}


@pytest.fixture(autouse=True)
def _inputs_wait_seconds_not_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cluster.INPUT_WAIT_VARIABLE, "10")


def saved(save: Path) -> dict[str, bytes]:
    """The bidegrees' files and their generators' weights, by name."""
    return {f"{kind}/{p.name}": p.read_bytes() for kind in ("bidegrees", "weights")
            for p in sorted((save / kind).glob("*.bin"))}


@pytest.fixture(scope="module")
def threaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bytes, Path]]:
    """One thread's run of each: its chart, its JSON and its save directory."""
    return saved_runs(lambda name: tmp_path_factory.mktemp(f"thread-{name}"), RUNS, 1)


@pytest.mark.parametrize("name", list(RUNS))
def test_two_worker_processes_give_one_threads_bytes(tmp_path: Path, threaded: dict, name: str) -> None:
    chart, chart_json, save = threaded[name]
    run = run_cli(*RUNS[name], "--workers", "2", "--save-dir", str(tmp_path / "save"), "--json",
                  str(tmp_path / "c.json"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == chart and (tmp_path / "c.json").read_bytes() == chart_json
    assert saved(tmp_path / "save") == saved(save) and saved(save)
    assert not list((tmp_path / "save").glob("cycles/*.bin"))  # every kernel saved for the next step was let go
    assert "(2 worker processes), 0 bidegrees loaded" in run.stderr.decode()
    again = run_cli(*RUNS[name], "--workers", "2", "--save-dir", str(tmp_path / "save"), "--quiet")
    assert again.returncode == 0 and again.stdout == chart  # resumed: everything loaded, nothing sent


def test_any_split_of_the_jobs_between_workers_gives_the_same_files(tmp_path: Path, threaded: dict) -> None:
    """Three simulated workers (each its own state) take the sphere's jobs over A^C in a random order that respects
    the dependencies: a step whose kernel another worker kept reads it from the save directory."""
    rng = np.random.default_rng(7)
    save = tmp_path / "save"
    req = motivic_request("S_2", 30, max_s=12, save_dir=save)
    store = MotivicSave(save, "S_2", req.mod, req.whole)
    store.store.lock()
    store.close()
    deps = dependencies("standard")
    todo = set(req.whole.bidegrees())
    workers: list[dict] = [{}, {}, {}]
    ran: dict[tuple[int, int], int] = {}
    while todo:
        ready = sorted(b for b in todo if not any(d in todo for d in deps(*b)))
        s, t = ready[rng.integers(len(ready))]
        ran[(s, t)] = w = int(rng.integers(len(workers)))
        cluster._RUNS = workers[w]
        cluster.job(str(save.resolve()), store.store.fingerprint, req.algorithm, req.whole, s, t)
        todo.remove((s, t))
    cluster._RUNS = {}
    assert saved(save) == saved(threaded["S_2"][2])
    elsewhere = [(s, t) for (s, t), w in ran.items() if s > 0 and ran[(s - 1, t)] != w]
    assert len(elsewhere) > 100  # steps that read the kernel below them from its file


def test_the_api_takes_workers_and_refuses_what_does_not_fit(tmp_path: Path, threaded: dict) -> None:
    run = run_motivic("Ctau", 40, max_s=16, workers=2, save_dir=tmp_path / "save")
    assert run.text() == threaded["Ctau"][0].decode() and run.way() == "2 worker processes"
    with pytest.raises(cluster.EngineError, match="needs a save directory"):
        motivic_request("S_2", 20, max_s=8, workers=2)
    with pytest.raises(cluster.EngineError, match="not both"):
        motivic_request("S_2", 20, max_s=8, workers=2, processes=True, save_dir=tmp_path / "other")


@pytest.mark.parametrize("args, needle", [
    (["--workers", "2"], "needs a save directory"),
    (["--cluster", " ", "--save-dir", "SAVE"], "address is empty"),
])
def test_bad_cluster_input_is_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    args = [str(tmp_path / "save") if a == "SAVE" else a for a in args]
    run = run_cli("resolve", "S_2", "--motivic", "--stem", "10", *args)
    assert_one_line_error(run, needle)
    assert not (tmp_path / "save").exists()
