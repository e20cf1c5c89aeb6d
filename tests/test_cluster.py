"""nassau resolve --workers N / --cluster ADDRESS: Dask worker processes over a shared save directory.

They give the threads' chart, JSON and save directory byte for byte, lose nothing to a SIGKILLed worker or client,
and refuse a second client on the same directory. Each Dask test starts a local cluster of 2 worker processes (a
few seconds); the worker function itself is also tested in this process, with no Dask, for any order of the jobs
and any split between workers.
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nassau.api.request import request
from nassau.engine.resolve import dependencies
from nassau.store import cluster
from tests.helpers import assert_one_line_error, run_cli, saved_runs

distributed = pytest.importorskip("distributed", reason="the cluster tests need dask[distributed] (the test extra)")
psutil = pytest.importorskip("psutil", reason="psutil comes with dask[distributed]")

S2 = ["resolve", "S_2", "--stem", "40", "--max-s", "12"]  # Nassau's algorithm, about 500 jobs
JOKER = ["resolve", "Joker", "--stem", "24", "--max-s", "8", "--algorithm", "standard"]


@pytest.fixture(autouse=True)
def _inputs_wait_seconds_not_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker these tests start (Dask's processes inherit the variable) waits 10 s for a missing input, not two
    minutes: a task sent before its inputs fails fast. A correct run waits for none here (one local directory)."""
    monkeypatch.setenv(cluster.INPUT_WAIT_VARIABLE, "10")


def files(save: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((save / "bidegrees").glob("*.bin"))}


@pytest.fixture(scope="module")
def threaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bytes, Path]]:
    """The threaded run of each command: its chart, its JSON and its save directory."""
    return saved_runs(lambda name: tmp_path_factory.mktemp(f"threads-{name}"), {"S_2": S2, "Joker": JOKER}, 2)


@pytest.mark.parametrize("name", ["S_2", "Joker"])
def test_two_worker_processes_give_the_threads_bytes(tmp_path: Path, threaded: dict, name: str) -> None:
    chart, chart_json, save = threaded[name]
    args = S2 if name == "S_2" else JOKER
    run = run_cli(*args, "--workers", "2", "--save-dir", str(tmp_path / "save"), "--json", str(tmp_path / "c.json"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == chart
    assert (tmp_path / "c.json").read_bytes() == chart_json
    assert files(tmp_path / "save") == files(save)
    assert (tmp_path / "save" / "nassau-save.json").read_bytes() == (save / "nassau-save.json").read_bytes()
    assert "2 worker processes, 0 bidegrees loaded" in run.stderr.decode()


def test_any_split_of_the_jobs_between_workers_gives_the_same_files(tmp_path: Path, threaded: dict,
                                                                    rng: np.random.Generator) -> None:
    """The worker function alone, in this process: three simulated workers (each its own cached resolution) take
    the jobs in a random order that respects the dependencies, as Dask might hand them out."""
    save = tmp_path / "save"
    req = request("S_2", 40, max_s=12, save_dir=save, threads=1)
    req.store.lock()
    req.store.close()
    deps = dependencies(req.algorithm)
    todo = set(req.region.bidegrees())
    workers: list[dict] = [{}, {}, {}]
    while todo:
        ready = sorted(b for b in todo if not any(d in todo for d in deps(*b)))
        s, t = ready[rng.integers(len(ready))]
        cluster._RUNS = workers[rng.integers(len(workers))]
        cluster.job(str(save.resolve()), req.store.fingerprint, req.algorithm, req.region, s, t)
        todo.remove((s, t))
    cluster._RUNS = {}
    assert files(save) == files(threaded["S_2"][2])
    assert all(w for w in workers), "every simulated worker should have run something"


def test_a_worker_waits_for_an_input_it_cannot_see_and_never_trusts_a_damaged_one(tmp_path: Path, threaded: dict,
                                                                                 monkeypatch) -> None:
    save = tmp_path / "save"
    shutil.copytree(threaded["S_2"][2], save)
    victim = save / "bidegrees" / "3_20.bin"
    victim.write_bytes(victim.read_bytes()[:-5])  # as a dead worker's half-written file would be, were it renamed
    (save / "bidegrees" / "4_21.bin").unlink()
    monkeypatch.setenv(cluster.INPUT_WAIT_VARIABLE, "0.2")
    monkeypatch.setattr(cluster, "_RUNS", {})
    req = request("S_2", 40, max_s=12, save_dir=save)
    with pytest.raises(cluster.StoreError, match=r"input \(n=17, s=3\) of job \(n=17, s=4\) is not in"):
        cluster.job(str(save.resolve()), req.store.fingerprint, req.algorithm, req.region, 4, 21)
    assert (save / "bidegrees" / "3_20.corrupt").exists()


@pytest.mark.parametrize("algorithm", ["nassau", "standard"])
def test_a_task_is_a_run_of_its_row_and_reads_every_task_its_jobs_read(algorithm: str) -> None:
    """The client's grouping (cluster.runs): every job in one task, a task's jobs consecutive in one row, and every
    dependency of a job either earlier in its own task or in a task it reads, sent before it."""
    jobs = request("S_2", 40, max_s=12).region.bidegrees()
    deps = dependencies(algorithm)
    tasks, inputs = cluster.runs(jobs, deps)
    home = {b: key for key, run in tasks.items() for b in run}
    assert sorted(home) == sorted(jobs)
    assert len(tasks) <= len(jobs) / 2, "a task per bidegree again: the scheduler's 2 ms per task would add up"
    sent = {key: k for k, key in enumerate(tasks)}
    for key, run in tasks.items():
        assert [s for s, _ in run] == [key[0]] * len(run)
        assert [t for _, t in run] == list(range(run[0][1], run[0][1] + len(run)))
        assert all(sent[d] < sent[key] for d in inputs[key])
        for k, (s, t) in enumerate(run):
            for d in deps(s, t):
                if d in home:
                    assert d in run[:k] or home[d] in inputs[key], f"{d} read by {(s, t)} is not an input"


def test_the_wait_for_inputs_is_the_variable_where_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for given, wait in (("0.5", 0.5), ("30", 30.0), ("", cluster.INPUT_WAIT), ("soon", cluster.INPUT_WAIT),
                        ("0", cluster.INPUT_WAIT)):
        monkeypatch.setenv(cluster.INPUT_WAIT_VARIABLE, given)
        assert cluster.input_wait() == wait, given
    monkeypatch.delenv(cluster.INPUT_WAIT_VARIABLE)
    assert cluster.input_wait() == cluster.INPUT_WAIT == 120


class _Future:
    def __init__(self, key: str) -> None:
        self.key, self.status = key, "finished"


class _Client:
    """Records what Cluster.run submits; every task finishes at once."""

    def __init__(self) -> None:
        self.tasks: dict[str, tuple] = {}

    def submit(self, fn, *args, key: str, priority: int) -> _Future:
        self.tasks[key] = args
        return _Future(key)

    def cancel(self, futures: list) -> None:
        pass


@pytest.mark.parametrize("algorithm", ["nassau", "standard"])
def test_each_task_is_sent_with_the_tasks_of_its_dependencies(algorithm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What Dask orders the tasks by: the inputs of a task (a run of bidegrees) are exactly the futures of the tasks
    holding its jobs' dependencies inside the job set (no Dask here: a stand-in client records each submission)."""
    from nassau.engine.region import Region

    monkeypatch.setattr(distributed, "as_completed", iter)
    region = Region(max_s=6, min_degree=0, max_stem=12)
    jobs = [b for b in region.bidegrees() if b != (2, 5)]  # one job already done: no task waits on it
    runner = object.__new__(cluster.Cluster)
    runner.client, runner.on_status, runner.resumed = _Client(), None, None
    store = type("Store", (), {"loaded": 0, "path": Path("."), "fingerprint": "f"})()
    finished = []
    runner.run(jobs, dependencies(algorithm), region, algorithm, store, lambda s, t: finished.append((s, t)))
    assert sorted(finished) == sorted(jobs)
    # each submission: (path, fingerprint, algorithm, region, bidegrees, *inputs)
    run_of = {key: tuple(args[4]) for key, args in runner.client.tasks.items()}
    home = {b: run for run in run_of.values() for b in run}
    assert sorted(home) == sorted(jobs)
    for args in runner.client.tasks.values():
        run = tuple(args[4])
        wanted = {home[d] for b in run for d in dependencies(algorithm)(*b) if d in home and home[d] != run}
        assert sorted(run_of[f.key] for f in args[5:]) == sorted(wanted), run
    assert any(len(args) > 6 for args in runner.client.tasks.values())


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nassau", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_files(proc: subprocess.Popen, save: Path, count: int) -> None:
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and len(list(save.glob("bidegrees/*.bin"))) < count:
        time.sleep(0.01)


def _workers(proc: subprocess.Popen) -> list:
    """The Dask worker processes of a client started with --workers (spawned children; not the resource tracker)."""
    found = []
    for child in psutil.Process(proc.pid).children():
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.NoSuchProcess:  # a short-lived helper that has just ended
            continue
    return found


def test_a_sigkilled_worker_costs_its_job_only(tmp_path: Path, threaded: dict) -> None:
    chart, _, clean = threaded["S_2"]
    save = tmp_path / "save"
    proc = _start(*S2, "--workers", "2", "--save-dir", str(save), "--quiet")
    _wait_for_files(proc, save, 150)
    victims = _workers(proc)
    assert len(victims) == 2 and proc.poll() is None, "the kill should land while both workers run"
    victims[0].send_signal(signal.SIGKILL)
    victims[0].wait(10)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == chart
    assert files(save) == files(clean)


def test_a_second_client_is_refused_and_a_killed_client_resumes(tmp_path: Path, threaded: dict) -> None:
    chart, _, clean = threaded["S_2"]
    save = tmp_path / "save"
    first = _start(*S2, "--workers", "2", "--save-dir", str(save), "--quiet")
    _wait_for_files(first, save, 100)
    assert first.poll() is None
    for extra in (["--workers", "2"], ["--threads", "1"]):
        assert_one_line_error(run_cli(*S2, *extra, "--save-dir", str(save)),
                              f"is in use by another run (pid {first.pid}")
    first.send_signal(signal.SIGKILL)
    first.communicate()
    partial = len(files(save))
    assert partial < len(files(clean)), "the kill should land partway through"
    again = run_cli(*S2, "--workers", "2", "--save-dir", str(save))
    assert again.returncode == 0, again.stderr
    assert again.stdout == chart and files(save) == files(clean)
    loaded = int(again.stderr.decode().split(" bidegrees loaded")[0].rsplit(" ", 1)[1])
    assert loaded >= partial - 2


@pytest.mark.parametrize(("args", "needle"), [
    (["--workers", "2"], "needs a save directory"),
    (["--workers", "0", "--save-dir", "SAVE"], "workers must be at least 1 (got 0)"),
    (["--cluster", " ", "--save-dir", "SAVE"], "address is empty"),
    (["--cluster", "tcp://127.0.0.1:9", "--save-dir", "SAVE"], "cannot reach the Dask scheduler at tcp://127.0.0.1:9"),
])
def test_bad_cluster_input(tmp_path: Path, monkeypatch, args: list[str], needle: str) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    args = [str(tmp_path / "save") if a == "SAVE" else a for a in args]
    assert_one_line_error(run_cli("resolve", "S_2", "--stem", "10", *args), needle)
    assert not (tmp_path / "save").exists()


def test_a_cofiber_is_refused_before_any_cluster_starts(tmp_path: Path) -> None:
    out = run_cli("resolve", "C2v14", "--max-t", "20", "--workers", "2", "--save-dir", str(tmp_path / "save"))
    assert_one_line_error(out, "is a cofiber, resolved in two phases on this machine only")
    assert not (tmp_path / "save").exists()
