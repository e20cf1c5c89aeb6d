"""The device lock (readers concurrent, writer exclusive, writer not starved), byte-weighted admission
(budget respected, FIFO, an oversize job alone, no deadlock) and the bounded stream pool, with threads."""
from __future__ import annotations

import random
import threading
import time

import pytest

from gpu.admission import Admission
from gpu.lock import SharedExclusiveLock
from gpu.streams import StreamPool

TIMEOUT = 10


def run_threads(targets: list) -> None:
    """Run each target on a thread of its own and wait for all; every thread's exception is raised here."""
    errors: list[BaseException] = []

    def guarded(target):
        def run() -> None:
            try:
                target()
            except BaseException as exc:  # noqa: BLE001 - raised in the test below
                errors.append(exc)
        return run

    threads = [threading.Thread(target=guarded(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
        assert not t.is_alive(), "a thread did not finish: deadlock?"
    if errors:
        raise ExceptionGroup(f"{len(errors)} of {len(threads)} threads raised", errors)


def wait_until(predicate, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.001)


def test_readers_share() -> None:
    lock = SharedExclusiveLock()
    barrier = threading.Barrier(4, timeout=TIMEOUT)

    def reader() -> None:
        with lock.shared():
            barrier.wait()  # all four inside at once, or the barrier times out

    run_threads([reader] * 4)
    assert lock.readers == 0


def test_writer_excludes_readers_and_writers() -> None:
    lock = SharedExclusiveLock()
    inside = []
    guard = threading.Lock()
    overlaps = []

    def enter(kind: str) -> None:
        with guard:
            if (kind == "w" and inside) or "w" in inside:
                overlaps.append((kind, list(inside)))
            inside.append(kind)

    def leave(kind: str) -> None:
        with guard:
            inside.remove(kind)

    def reader() -> None:
        for _ in range(200):
            with lock.shared():
                enter("r")
                leave("r")

    def writer() -> None:
        for _ in range(100):
            with lock.exclusive():
                enter("w")
                time.sleep(0)
                leave("w")

    run_threads([reader, reader, reader, writer, writer])
    assert overlaps == []


def test_waiting_writer_is_not_starved_by_new_readers() -> None:
    lock = SharedExclusiveLock()
    first_in = threading.Event()
    release_first = threading.Event()
    order = []

    def first_reader() -> None:
        with lock.shared():
            first_in.set()
            release_first.wait(TIMEOUT)

    def writer() -> None:
        with lock.exclusive():
            order.append("writer")

    def late_reader() -> None:
        with lock.shared():
            order.append("late reader")

    t1 = threading.Thread(target=first_reader, daemon=True)
    t1.start()
    first_in.wait(TIMEOUT)
    tw = threading.Thread(target=writer, daemon=True)
    tw.start()
    wait_until(lambda: lock.writers_waiting == 1, "the writer to queue")
    tr = threading.Thread(target=late_reader, daemon=True)
    tr.start()
    time.sleep(0.05)
    assert order == [], "the late reader must wait behind the queued writer"
    release_first.set()
    for t in (t1, tw, tr):
        t.join(TIMEOUT)
    assert order == ["writer", "late reader"]


def test_writer_gets_in_under_a_stream_of_readers() -> None:
    lock = SharedExclusiveLock()
    stop = threading.Event()
    wrote = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            with lock.shared():
                time.sleep(0.001)

    readers = [threading.Thread(target=reader, daemon=True) for _ in range(6)]
    for t in readers:
        t.start()
    time.sleep(0.02)

    def writer() -> None:
        with lock.exclusive():
            wrote.set()

    threading.Thread(target=writer, daemon=True).start()
    assert wrote.wait(TIMEOUT)
    stop.set()
    for t in readers:
        t.join(TIMEOUT)


def test_admission_respects_the_byte_budget() -> None:
    adm = Admission(100)
    guard = threading.Lock()
    state = {"now": 0, "max": 0}

    def job(size: int) -> None:
        with adm.admit(size):
            with guard:
                state["now"] += size
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.002)
            with guard:
                state["now"] -= size

    rng = random.Random(7)
    run_threads([lambda s=rng.randint(1, 60): job(s) for _ in range(40)])
    assert 60 < state["max"] <= 100, "jobs ran together, never over the budget"
    assert adm.in_use == 0


def test_small_jobs_run_together() -> None:
    adm = Admission(100)
    barrier = threading.Barrier(3, timeout=TIMEOUT)

    def job() -> None:
        with adm.admit(30):
            barrier.wait()

    run_threads([job] * 3)


def test_oversize_job_runs_alone_and_never_deadlocks() -> None:
    adm = Admission(100)
    log = []
    guard = threading.Lock()

    def job(name: str, size: int, hold: float) -> None:
        with adm.admit(size):
            with guard:
                log.append(("in", name, adm.in_use))
            time.sleep(hold)
            with guard:
                log.append(("out", name, 0))

    run_threads([lambda: job("big", 500, 0.02), lambda: job("a", 40, 0.01), lambda: job("b", 40, 0.01),
                 lambda: job("big2", 1000, 0.01)])
    running: set = set()
    for kind, name, _ in log:
        if kind == "in":
            if name.startswith("big"):
                assert not running, f"{name} was admitted beside {running}"
            else:
                assert not any(r.startswith("big") for r in running)
            running.add(name)
        else:
            running.discard(name)


def test_admission_is_first_come_first_served() -> None:
    adm = Admission(100)
    hold = threading.Event()
    order = []

    def holder() -> None:
        with adm.admit(60):
            hold.wait(TIMEOUT)

    def job(name: str, size: int) -> None:
        with adm.admit(size):
            order.append(name)

    th = threading.Thread(target=holder, daemon=True)
    th.start()
    wait_until(lambda: adm.in_use == 60, "the holder")
    big = threading.Thread(target=job, args=("big", 80), daemon=True)
    big.start()
    time.sleep(0.02)
    small = threading.Thread(target=job, args=("small", 10), daemon=True)
    small.start()
    time.sleep(0.02)
    assert order == [], "the small job fits but must not pass the queued big one"
    hold.set()
    for t in (th, big, small):
        t.join(TIMEOUT)
    assert order == ["big", "small"]


def test_stream_pool_is_bounded_and_per_thread() -> None:
    made = []
    pool = StreamPool(2, lambda: made.append(object()) or made[-1])
    seen: list[set] = []
    guard = threading.Lock()

    def worker() -> None:
        mine = {id(pool.get()) for _ in range(5)}
        with guard:
            seen.append(mine)

    run_threads([worker] * 6)
    assert pool.created == 2 and len(made) == 2
    assert all(len(s) == 1 for s in seen), "a thread keeps its stream"
    assert set().union(*seen) == {id(m) for m in made}, "round-robin uses every stream"


def test_stream_pool_rejects_zero() -> None:
    with pytest.raises(ValueError):
        StreamPool(0, object)
