"""Prefetch: pieces of a job that idle workers compute ahead of it. Results are taken in order whoever computed them,
a dropped piece is never started, a helper's error reaches the job, an idle worker of run_jobs does help, and a
resolution is the same on one thread and on many helping ones."""
from __future__ import annotations

import threading
from functools import partial

import numpy as np
import pytest

from algebra.module.loader import load_module
from nassau.engine import prefetch, scheduler
from nassau.engine.prefetch import Board, Prefetch
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from tests.test_scheduler import TIMEOUT, finishes


def counting(calls: list[int], i: int) -> int:
    calls.append(i)
    return i * i


def test_off_a_worker_the_job_computes_what_it_takes_and_nothing_else() -> None:
    calls: list[int] = []
    with Prefetch([partial(counting, calls, i) for i in range(5)]) as p:
        p.drop(0)
        assert [p.take(i) for i in (1, 2, 4)] == [1, 4, 16]
    assert calls == [1, 2, 4]  # 0 dropped, 3 never asked for


def test_a_helpers_result_is_taken_not_recomputed_and_a_dropped_piece_never_starts() -> None:
    calls: list[int] = []
    board = Board(lambda: None)
    prefetch.attach(board)
    try:
        p = Prefetch([partial(counting, calls, i) for i in range(4)])
    finally:
        prefetch.attach(None)
    with p:
        assert board.has_work()
        p.drop(1)
        assert board.help_one() and calls == [0]  # the lowest piece not dropped
        assert board.help_one() and calls == [0, 2]
        assert p.take(0) == 0 and p.take(2) == 4 and p.take(3) == 9
        assert calls == [0, 2, 3]
        assert not board.has_work() and not board.help_one()


def test_a_closed_prefetch_lets_go_of_what_its_pieces_hold() -> None:
    """The pieces' arguments (Nassau's d on every row, megabytes a job) are freed when the job leaves the Prefetch,
    though the board still lists it, and posting the next one drops the closed ones from the board."""
    import gc
    import weakref

    class Big:
        pass

    board = Board(lambda: None)
    prefetch.attach(board)
    try:
        data = Big()
        held = weakref.ref(data)
        with Prefetch([partial(id, data), partial(id, data)]) as p:
            p.take(0)
        del data
        gc.collect()
        assert held() is None
        with Prefetch([partial(id, 1), partial(id, 2)]):
            assert board._offers == [board._offers[-1]] and board._offers[-1] is not p
    finally:
        prefetch.attach(None)


def test_a_piece_that_fails_in_a_helper_fails_in_the_job() -> None:
    def bad() -> int:
        raise ValueError("piece failed")

    board = Board(lambda: None)
    prefetch.attach(board)
    try:
        p = Prefetch([bad, bad])
    finally:
        prefetch.attach(None)
    with p:
        assert board.help_one()  # the helper swallows nothing silently: the job recomputes it
        with pytest.raises(ValueError, match="piece failed"):
            p.take(0)


def test_an_idle_worker_helps_the_running_job() -> None:
    """Structural: one job, two workers; the job waits until a piece has run on the other worker (without helping
    the wait times out and the assertion fails)."""
    owner: list[int] = []
    ran_on: list[int] = []
    started = threading.Event()

    def piece(i: int) -> int:
        ran_on.append(threading.get_ident())
        started.set()
        return i

    def job(s: int, t: int) -> None:
        owner.append(threading.get_ident())
        with Prefetch([partial(piece, i) for i in range(4)]) as p:
            started.wait(TIMEOUT / 2)
            assert [p.take(i) for i in range(4)] == [0, 1, 2, 3]

    finishes([(0, 0)], lambda s, t: [], job, 2)
    assert any(thread != owner[0] for thread in ran_on)


def test_helping_threads_give_the_one_thread_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_module("S_2")
    region = Region(max_s=20, min_degree=0, max_stem=40)
    one = resolve(module, region, "nassau", 1)
    before = prefetch.COUNTERS["helped"]
    monkeypatch.setattr(scheduler, "SHARE_AFTER", 0.0)  # every worker from the start, though the jobs are small
    many = resolve(module, region, "nassau", 6)
    assert prefetch.COUNTERS["helped"] > before  # six workers on a narrow wavefront: some idle, and they help
    for s in range(1, region.max_s + 1):
        a, b = one.differential(s), many.differential(s)
        assert a.num_outputs == b.num_outputs
        for g in range(a.num_outputs):
            vector, ngens = a.output(g)
            other, other_ngens = b.output(g)
            assert ngens == other_ngens
            np.testing.assert_array_equal(vector, other)


class Elsewhere:
    """Claims as another process holds them: the pieces in `there` were claimed there first."""

    def __init__(self, there: set[int]) -> None:
        self.there = there
        self.closed = False

    def take(self, i: int) -> bool:
        return i not in self.there

    def close(self) -> None:
        self.closed = True


def test_a_piece_claimed_by_another_process_is_waited_for_and_taken_not_recomputed() -> None:
    """Piece 1 was claimed elsewhere and arrives while the job waits; piece 2 arrived before the job came to it (the
    job must take it, not wait for a delivery already made); piece 0 the job computes itself."""
    calls: list[int] = []
    p = Prefetch([partial(counting, calls, i) for i in range(3)], recipes=["r0", "r1", "r2"])
    p.claims = claims = Elsewhere({1, 2})
    p.deliver(2, "two", True)
    guard = threading.Timer(TIMEOUT, p.abandon)  # a delivery lost: the job computes the piece, and the test fails
    guard.start()
    try:
        with p:
            assert p.take(0) == 0
            threading.Timer(0.05, p.deliver, (1, "one", True)).start()
            assert p.take(1) == "one" and p.take(2) == "two"
    finally:
        guard.cancel()
    assert calls == [0] and claims.closed


def test_a_piece_that_failed_elsewhere_or_whose_coordinator_is_gone_is_computed_here() -> None:
    calls: list[int] = []
    p = Prefetch([partial(counting, calls, i) for i in range(3)], recipes=["r0", "r1", "r2"])
    p.claims = Elsewhere({0, 1, 2})
    with p:
        p.deliver(0, None, False)
        assert p.take(0) == 0
        # piece 1 is running elsewhere when the coordinator goes: the job stops waiting for it
        threading.Timer(0.05, p.abandon).start()
        assert p.take(1) == 1 and p.take(2) == 4  # 2 was never claimed here: after abandon it is
    assert calls == [0, 1, 2]
