"""Bidegree jobs on worker processes (nassau.engine.processes): the same resolution as one thread, bit for bit, for
both algorithms and a resumed run; a job's failure or a dead worker end the run with its cause; each product table is
filled once, in memory the workers share; Ctrl-C stops the workers and keeps the save directory."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from algebra.module.loader import load_module
from nassau.engine import processes
from nassau.engine.processes import run_processes
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import dependencies, resolve
from nassau.engine.scheduler import JobFailed
from tests.helpers import run_cli


@pytest.fixture(autouse=True)
def workers_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every job counts as heavy, so that the workers run all but the first LIGHT_JOBS of these small runs (which
    would otherwise run here, before the fork, whole)."""
    monkeypatch.setattr(processes, "LIGHT", 0.0)


def everything(res: Resolution, region: Region) -> dict:
    """Every bidegree's new generators and their images, as bytes."""
    out = {}
    for s, t in region.bidegrees():
        added = res.added(s, t)
        out[(s, t)] = (added.count, added.ncols, added.target_ngens, added.rows.tobytes())
    return out


@pytest.mark.parametrize("module,algorithm,stem,max_s", [("S_2", "nassau", 36, 14), ("C2", "standard", 24, 8),
                                                         ("S_3", "standard", 60, 8), ("S_3", "nassau", 80, 12)])
def test_processes_give_the_one_thread_resolution_bit_for_bit(module: str, algorithm: str, stem: int,
                                                              max_s: int) -> None:
    m = load_module(module)
    region = Region(max_s=max_s, min_degree=m.min_degree, max_stem=stem)
    one = resolve(m, region, algorithm, 1)
    done: list[tuple[int, int]] = []
    many = resolve(m, region, algorithm, 3, on_done=lambda s, t: done.append((s, t)), processes=True)
    assert everything(many, region) == everything(one, region)
    assert sorted(done) == sorted(region.bidegrees())  # each reported once, here, after it was added


def test_a_run_on_processes_resumes_a_save_directory_and_saves_the_same_files(tmp_path: Path) -> None:
    save = tmp_path / "save"
    first = run_cli("resolve", "S_2", "--stem", "20", "--max-s", "8", "--save-dir", str(save), "--quiet")
    more = run_cli("resolve", "S_2", "--stem", "32", "--max-s", "8", "--save-dir", str(save), "--threads", "2",
                   "--processes")
    fresh = run_cli("resolve", "S_2", "--stem", "32", "--max-s", "8", "--save-dir", str(tmp_path / "fresh"),
                    "--quiet")
    assert first.returncode == more.returncode == fresh.returncode == 0, more.stderr
    assert more.stdout == fresh.stdout and b"2 processes" in more.stderr and b"bidegrees loaded" in more.stderr
    files = {p.name: p.read_bytes() for p in (save / "bidegrees").iterdir()}
    assert files == {p.name: p.read_bytes() for p in (tmp_path / "fresh" / "bidegrees").iterdir()}


def _run_failing(at: tuple[int, int], fail, where: str) -> Resolution:
    """S_2 through stem 10, s <= 4, by standard steps on two workers (a thread here and a forked process), fail()
    called in place of the first job from `at` on (t first, then s) that runs `where`: "here" (this process: before
    the fork, which LIGHT 0 makes the first LIGHT_JOBS jobs, t <= 3, or on the thread here) or "forked"."""
    from nassau.engine.standard import step_standard

    region = Region(max_s=4, min_degree=0, max_stem=10)
    res = Resolution(load_module("S_2"))
    res.algebra.extend(region.t_limit + 1)
    coordinator = os.getpid()

    def work(s: int, t: int) -> None:
        if (t, s) >= (at[1], at[0]) and (os.getpid() == coordinator) == (where == "here"):
            fail()
        step_standard(res, s, t)

    run_processes(res, region.bidegrees(), dependencies("standard"), work, 2)
    return res


@pytest.mark.parametrize("at,where", [((1, 2), "here"), ((2, 6), "here"), ((2, 6), "forked")],
                         ids=["before the fork", "on the thread here", "in the forked worker"])
def test_a_failing_job_ends_the_run_with_its_error(at: tuple[int, int], where: str) -> None:
    def fail() -> None:
        raise ValueError("no such class")

    with pytest.raises(JobFailed, match="no such class") as caught:
        _run_failing(at, fail, where)
    assert isinstance(caught.value.__cause__, ValueError)


def test_a_dead_worker_ends_the_run() -> None:
    with pytest.raises(JobFailed, match=r"worker running \(n=\d+, s=\d+\) died"):
        _run_failing((1, 5), lambda: os._exit(9), "forked")


def test_workers_fill_each_product_table_once_in_memory_they_share() -> None:
    """The tables move to shared memory before the fork: every table a worker fills is logged there once (a key is
    claimed before its table is filled, so no table is filled by two workers), and this process, whose own worker
    thread filled some, reads the forked worker's too. Without the move the forked worker would fill its own, and
    none would reach here."""
    from algebra.milnor import product_tables as pt
    from algebra.milnor.table_arena import LOGGED
    from nassau.engine.standard import step_standard

    region = Region(max_s=6, min_degree=0, max_stem=24)
    res = Resolution(load_module("S_2"))
    res.algebra.extend(region.t_limit + 1)
    tables = pt.use_tables(res.algebra, 1 << 26)
    run_processes(res, region.bidegrees(), dependencies("standard"), lambda s, t: step_standard(res, s, t), 2)
    with tables._arena.lock:
        tables._catch_up()
    assert 0 < tables.counts["tables"] < tables.snapshot().ntables  # the worker here made some, the process others
    log = tables._arena.log[:tables._arena.counters[LOGGED]]
    tids = (log[:, 1] >> np.uint64(16)).astype(np.int64) - 1
    kept = log[(tids >= 0) & (tids < pt._TOO_LARGE - 1)]
    keys = {(int(w0), int(w1) & 0xFFFF) for w0, w1 in kept}
    assert len(kept) > 100 and len(keys) == len(kept) == tables.snapshot().ntables


def test_without_a_process_shared_lock_the_tables_stay_private_and_the_run_is_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A system without POSIX semaphores (no /dev/shm) gives no process-shared lock: the tables stay private to each
    worker, which fills its own, the steps keep their pieces, and the resolution is the one thread's."""
    from algebra.milnor import product_tables as pt
    from algebra.milnor import table_arena
    from nassau.engine import shared_pieces

    def no_semaphores():
        raise OSError("this system does not support sem_open")

    monkeypatch.setattr(table_arena, "process_lock", no_semaphores)
    monkeypatch.setattr(shared_pieces, "process_lock", no_semaphores)
    m = load_module("C2")
    region = Region(max_s=6, min_degree=m.min_degree, max_stem=20)
    one = resolve(m, region, "standard", 1)
    tables = pt.use_tables(one.algebra, 1 << 24)
    many = resolve(m, region, "standard", 2, processes=True)
    assert not tables._arena.shared
    assert everything(many, region) == everything(one, region)


def test_a_runs_first_light_jobs_run_here_before_the_workers_start(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs under LIGHT seconds run in this process before the fork (a round trip through a worker costs more than
    they do); from the first heavier ones on, the workers run them. Here the jobs with t >= 12 are made heavy."""
    from nassau.engine.standard import step_standard

    monkeypatch.setattr(processes, "LIGHT", 0.001)
    region = Region(max_s=5, min_degree=0, max_stem=24)
    res = Resolution(load_module("S_2"))
    res.algebra.extend(region.t_limit + 1)
    ran = tmp_path / "ran"

    def work(s: int, t: int) -> None:
        step_standard(res, s, t)
        if t >= 12:
            time.sleep(2 * processes.LIGHT)
        with open(ran, "a") as f:
            f.write(f"{s} {t} {os.getpid()}\n")

    run_processes(res, region.bidegrees(), dependencies("standard"), work, 2)
    where = {(int(s), int(t)): int(pid) for s, t, pid in (line.split() for line in ran.read_text().splitlines())}
    assert sorted(where) == sorted(region.bidegrees())
    assert all(pid == os.getpid() for (s, t), pid in where.items() if t < 12)
    assert any(pid != os.getpid() for pid in where.values())


def test_a_run_whose_first_job_is_heavy_forks_its_workers_after_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that resumes a save directory starts at heavy jobs: the first job that takes HEAVY seconds here forks
    the workers, rather than the first LIGHT_JOBS of them running on this one core. Every job here is made heavy;
    the jobs run on this thread before the fork are counted."""
    from nassau.engine.standard import step_standard

    monkeypatch.setattr(processes, "LIGHT", 0.001)
    monkeypatch.setattr(processes, "HEAVY", 0.05)
    region = Region(max_s=3, min_degree=0, max_stem=6)
    res = Resolution(load_module("S_2"))
    res.algebra.extend(region.t_limit + 1)
    coordinator, main, ran = os.getpid(), threading.get_ident(), tmp_path / "ran"

    def work(s: int, t: int) -> None:
        step_standard(res, s, t)
        time.sleep(processes.HEAVY)
        with open(ran, "a") as f:
            f.write(f"{os.getpid() == coordinator and threading.get_ident() == main}\n")

    run_processes(res, region.bidegrees(), dependencies("standard"), work, 2)
    before_fork = ran.read_text().split()
    assert len(before_fork) == len(region.bidegrees()) > processes.LIGHT_JOBS
    assert before_fork.count("True") == 1


def test_a_worker_is_sent_the_other_workers_results_once_and_never_its_own() -> None:
    """The coordinator's log hands each worker what the others added since its last job: its own results would only
    be pickled, sent and skipped (half of what a forked worker was sent among two workers)."""
    from nassau.engine.processes import _Log

    log = _Log(2)
    log.append(0, "a")
    log.append(1, "b")
    assert log.news(0) == ["b"] and log.news(0) == []
    log.append(0, "c")
    assert log.news(1) == ["a", "c"] and log.news(1) == []


def test_a_table_filled_in_a_forked_process_is_read_here(rng: np.random.Generator) -> None:
    """A child forked after share_between_processes runs a batch and fills its tables; here the same batch then
    fills none, and its products are the bits of the enumeration."""
    import multiprocessing

    from algebra.milnor.products import run_batch
    from tests.test_algebra_products import random_batch
    from tests.test_product_tables import fresh

    shared, direct = fresh("A", 1 << 28), fresh("A", 0)
    batch, ncols = random_batch(rng, shared, rows=120, lists=12, top=40)
    tables = shared._product_tables
    tables.share_between_processes()
    out = np.zeros((120, (ncols + 63) // 64), dtype=np.uint64)
    child = multiprocessing.get_context("fork").Process(target=run_batch, args=(out.copy(), batch, shared))
    child.start()
    child.join()
    assert child.exitcode == 0 and tables.counts["tables"] == 0
    run_batch(out, batch, shared)
    want = np.zeros_like(out)
    run_batch(want, batch, direct)
    assert tables.counts["filled_batches"] == 0 and tables.snapshot().ntables > 0
    assert np.array_equal(out, want)


def _default_sigint() -> None:
    """In the child before exec: pytest started with SIGINT ignored (nohup, a shell's background job) would pass the
    ignore on, and the run would never see Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("to", ["group", "coordinator"])
def test_ctrl_c_stops_the_workers_and_keeps_the_save(tmp_path: Path, to: str) -> None:
    """Ctrl-C in a terminal reaches the whole foreground process group, the workers too, which leave the stopping
    to the coordinator (no worker's KeyboardInterrupt traceback); `kill -INT` reaches the coordinator alone. The run
    starts in a session of its own, as a terminal's command does, with SIGINT at its default."""
    save = tmp_path / "save"
    # A run of several seconds, so that the signal lands while it works (stem 70, s <= 15 now ends in 2 s).
    proc = subprocess.Popen([sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", "90", "--max-s", "30",
                             "--threads", "2", "--processes", "--save-dir", str(save)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=_default_sigint)
    try:
        deadline = time.time() + 120  # the worker is forked once the run's first, light jobs are done here
        while time.time() < deadline and proc.poll() is None and (len(list(save.glob("bidegrees/*.bin"))) < 40
                                                                  or not _children(proc.pid)):
            time.sleep(0.01)
        children = _children(proc.pid)
        assert len(children) == 1, children  # and the other worker is a thread of the run's own process
        if to == "group":
            _ctrl_c_on_the_group_while_the_worker_waits(proc, children[0])
        else:
            proc.send_signal(signal.SIGINT)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)  # a failure before the signal leaves no stem-90 run behind
        proc.wait()
        raise
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert b"Traceback" not in err and b"interrupted" in err
    assert not [p for p in (save / "bidegrees").iterdir() if ".tmp" in p.name]
    deadline = time.time() + 10
    while time.time() < deadline and any(Path(f"/proc/{pid}").exists() for pid in children):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in children), "a worker outlived the run"


def test_a_worker_leaves_when_the_coordinator_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives the coordinator no chance to stop its workers; each reads the end of its pipe and leaves rather
    than wait on it for ever."""
    proc = subprocess.Popen([sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", "90", "--max-s", "30",
                             "--threads", "2", "--processes", "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    def workers() -> list[int]:  # forks of the run (not, say, a first run's kernel-compiling helper)
        return [pid for pid in _children(proc.pid) if _cmdline(pid) == _cmdline(proc.pid)]

    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not workers():
        time.sleep(0.01)
    children = workers()
    assert children, "no worker was forked"
    proc.kill()
    proc.wait()
    deadline = time.time() + 20
    while time.time() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in children), "a worker outlived its coordinator"


def _ctrl_c_on_the_group_while_the_worker_waits(proc: subprocess.Popen, worker: int) -> None:
    """Where the worker waits for its next job, a Ctrl-C it took itself would surface (in a job it is handed to the
    coordinator): stop the coordinator so that the worker runs out of jobs, press Ctrl-C on the group once it waits,
    give a worker that took it the time to print its traceback and end, and let the coordinator go on."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        assert _waits(worker), "the worker never ran out of jobs"
        os.killpg(proc.pid, signal.SIGINT)
        deadline = time.time() + 1.5
        while time.time() < deadline and _alive(worker):
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGCONT)


def _waits(pid: int, timeout: float = 60) -> bool:
    """Whether process pid's main thread comes to wait on a lock (its job queue) and uses no CPU for 0.3 s."""
    def ticks() -> tuple[str, ...]:
        return tuple(Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()[11:13])

    deadline = time.time() + timeout
    while time.time() < deadline:
        before = ticks()
        time.sleep(0.3)
        if ticks() == before and Path(f"/proc/{pid}/task/{pid}/wchan").read_text().startswith("futex"):
            return True
    return False


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, dead but not yet reaped by init, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def test_idle_workers_compute_pieces_of_a_running_step_and_give_the_same_generators(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural: two Nassau steps left, the second waiting on the first, which runs on the forked worker; the
    worker here, idle, is handed the first's pieces (nassau.engine.shared_pieces) and computes some (each piece made
    slow here, so that the step cannot take them all first); the coordinator relays them to the step, whose
    generators are the one-thread run's, bit for bit. Without the sharing no piece is relayed."""
    import time as clock

    from nassau.engine import nassau_step, shared_pieces
    from nassau.engine.resolve import step

    module = load_module("S_2")
    region = Region(max_s=10, min_degree=0, max_stem=30)
    job = (4, 34)  # a step with seven signature blocks to correct through
    one = resolve(module, region, "nassau", 1)
    res = Resolution(module)
    res.algebra.extend(region.t_limit + 1)
    for s, t in sorted(region.bidegrees(), key=lambda j: (j[1], j[0])):
        if (t, s) >= (job[1], job[0]):
            break
        step(res, "nassau", s, t)
    slow = nassau_step.signature_rows

    def signature_rows(*args):
        clock.sleep(0.05)
        return slow(*args)

    monkeypatch.setattr(nassau_step, "signature_rows", signature_rows)
    monkeypatch.setattr(processes, "_run_here_while_light", lambda graph, work, on_done: None)
    before = shared_pieces.COUNTERS["relayed"]
    jobs = [job, (job[0] + 1, job[1] + 1)]
    run_processes(res, jobs, dependencies("nassau"), lambda s, t: step(res, "nassau", s, t), 2)
    assert shared_pieces.COUNTERS["relayed"] > before
    for s, t in jobs:
        mine, theirs = res.added(s, t), one.added(s, t)
        assert mine.count == theirs.count and mine.rows.tobytes() == theirs.rows.tobytes()
    assert res.added(*job).count > 0


def test_a_lock_whose_maker_is_killed_holding_it_lets_its_waiters_go(tmp_path: Path) -> None:
    """A process killed (SIGKILL) while it holds a process_lock leaves it held for ever; a process forked from it that
    waits on the lock raises MakerGone and so can leave, rather than hang (a worker of a killed coordinator)."""
    import multiprocessing
    import os
    import signal as sig

    from algebra.milnor.table_arena import MakerGone, process_lock

    said = tmp_path / "waiter"

    def waiter(lock) -> None:
        try:
            with lock:
                said.write_text("acquired")
        except MakerGone:
            said.write_text("gone")

    def maker() -> None:
        lock = process_lock()
        lock.__enter__()  # held until this process is killed
        multiprocessing.get_context("fork").Process(target=waiter, args=(lock,)).start()
        time.sleep(60)

    proc = multiprocessing.get_context("fork").Process(target=maker)
    proc.start()
    time.sleep(0.5)
    os.kill(proc.pid, sig.SIGKILL)
    proc.join()
    deadline = time.time() + 10
    while time.time() < deadline and not said.exists():
        time.sleep(0.05)
    assert said.read_text() == "gone"


def test_bound_jobs_stay_on_their_worker_and_chains_spread(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With bound (the motivic steps': (s, t) on the worker that ran (s - 1, t)) each job after the fork runs on the
    worker that ran the one it is bound to, and the chains (bound to none at s = 0) spread, so that both workers run
    a fair share. Jobs with t >= 8 are made heavy."""
    monkeypatch.setattr(processes, "LIGHT", 0.001)
    region = Region(max_s=6, min_degree=0, max_t=40)
    ran = tmp_path / "ran"
    main = threading.get_ident()

    def work(s: int, t: int) -> None:
        if t >= 8:
            time.sleep(0.004)
        with open(ran, "a") as f:
            f.write(f"{s} {t} {os.getpid()} {threading.get_ident()}\n")

    res = Resolution(load_module("S_2"))
    run_processes(res, region.bidegrees(), lambda s, t: [(s, t - 1), (s - 1, t)], lambda s, t: work(s, t), 2,
                  bound=lambda s, t: (s - 1, t) if s else None)
    where = {(int(s), int(t)): (int(pid), int(thread))
             for s, t, pid, thread in (line.split() for line in ran.read_text().splitlines())}
    assert sorted(where) == sorted(region.bidegrees())
    before = {job for job, (pid, thread) in where.items() if pid == os.getpid() and thread == main}
    after = [job for job in where if job not in before]
    assert after and all(where[(s, t)] == where[(s - 1, t)] for s, t in after if s and (s - 1, t) not in before)
    shares = [sum(where[j] == w for j in after) / len(after) for w in set(where[j] for j in after)]
    assert len(shares) == 2 and min(shares) > 0.3, shares
