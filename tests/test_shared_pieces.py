"""The slab through which worker processes share a step's pieces (nassau.engine.shared_pieces): a helper claims from
the last piece, the owner from the first, neither gets a piece the other has, a closed offer gives nothing more, an
offer does not reuse an inbox half a helper still writes to, and a piece written to the inbox reads back as it was.
(A run that shares pieces between processes: tests/test_processes.py.)"""
from __future__ import annotations

import threading

import numpy as np

from fp import field, from_bool, quasi_inverse_with_identity
from nassau.engine import shared_pieces
from nassau.engine.prefetch import Prefetch
from nassau.engine.shared_pieces import ProcessBoard, Slab, help_with, slots

NEVER = lambda: False  # noqa: E731 - the owner is never abandoned here


def test_the_owner_and_a_helper_claim_each_piece_once_from_the_two_ends() -> None:
    slab = Slab(2)
    slab.open(1, 7, np.ones(4, dtype=bool), NEVER)
    assert slab.has_pending(1, 7, 4) and not slab.has_pending(1, 5, 4)
    assert slab.claim_last(1, 7, 4) == 3
    assert slab.take(1, 7, 0) and not slab.take(1, 7, 3)  # the owner's first; the helper's last, not the owner's
    assert slab.claim_last(1, 7, 4) == 2
    assert slab.take(1, 7, 1)
    assert slab.claim_last(1, 7, 4) == -1 and not slab.has_pending(1, 7, 4)


def test_a_closed_or_replaced_offer_gives_a_helper_nothing_and_a_piece_without_a_slot_stays_here() -> None:
    slab = Slab(2)
    slab.open(0, 1, np.ones(3, dtype=bool), NEVER)
    slab.close(0, 1)
    assert slab.claim_last(0, 1, 3) == -1
    slab.open(0, 3, np.array([True, True, False]), NEVER)  # the same half
    assert slab.claim_last(0, 1, 3) == -1  # an order for the old offer, arriving late
    assert slab.claim_last(0, 3, 3) == 1  # piece 2 has no slot: only the owner takes it
    slab.close(0, 1)  # the old offer's close does not close the new one
    assert slab.claim_last(0, 3, 3) == 0


def test_an_offer_waits_for_a_helper_still_writing_in_its_half() -> None:
    slab = Slab(1)
    slab.open(0, 2, np.ones(2, dtype=bool), NEVER)
    assert slab.claim_last(0, 2, 2) == 1
    slab.close(0, 2)
    slab.open(0, 3, np.ones(2, dtype=bool), NEVER)  # the other half: no wait
    done = threading.Timer(0.1, slab.written, (0, 2, 1))
    done.start()
    slab.open(0, 4, np.ones(2, dtype=bool), NEVER)  # half 0 again: waits until piece 1 of offer 2 is written
    assert not done.is_alive() and slab.states[0, 0, 1] == shared_pieces.PENDING


class Recipe:
    """A piece as a helper computes it: the quasi-inverse of a random block and its image."""

    def __init__(self, image: np.ndarray, cols: np.ndarray, ncols: int) -> None:
        self.image, self.cols, self.rows = image, cols, np.arange(image.shape[0])
        self.width, self.src_width, self.unit = image.shape[1], field(2).storage(image.shape[0]), 8

    def result_bytes(self) -> int:
        rank = min(len(self.rows), len(self.cols))
        return (len(self.rows) * self.width + rank * self.src_width) * self.unit + rank * 8

    def __call__(self, res, tables):
        f = field(2)
        return quasi_inverse_with_identity(f.gather(self.image, self.cols), len(self.cols), f), self.image


def test_a_piece_written_to_the_owners_inbox_reads_back_bit_for_bit(rng: np.random.Generator) -> None:
    f = field(2)
    recipes = []
    for _ in range(3):
        rows, ncols = int(rng.integers(1, 40)), int(rng.integers(1, 300))
        image = from_bool(rng.integers(0, 2, size=(rows, ncols)).astype(bool))
        recipes.append(Recipe(image, np.sort(rng.choice(ncols, size=min(ncols, 20), replace=False)), ncols))

    notices = []
    board = ProcessBoard(Slab(2), 0, notices.append)
    with Prefetch([NEVER] * 3, recipes=lambda: recipes) as offer:
        board.post(offer)
        board.want()
        (_, serial, _, offsets), = notices

        class Res:
            field = f

        sent = []
        assert help_with(Res(), board._slab, 0, serial, recipes, offsets, sent.append, NEVER) == 3
        for _, owner, notice in sent:
            board.deliver(notice)
        for i in range(3):
            inverse, image = offer.take(i)  # delivered: NEVER, the piece's task here, would give False
            want, want_image = recipes[i](None, None)
            np.testing.assert_array_equal(image, want_image)
            np.testing.assert_array_equal(inverse.pivots, want.pivots)
            np.testing.assert_array_equal(inverse.preimage, want.preimage)
            assert inverse.source_dim == want.source_dim


def test_a_steps_pieces_are_shared_only_when_another_worker_asks_and_only_those_not_started() -> None:
    """Structural: until the coordinator asks (another worker idle), a posted Prefetch makes no recipes and opens
    nothing in the slab; asked, the latest one's pieces not yet taken are opened; asked while none is open, the
    next one posted is shared at once, and after that none until asked again."""
    made, notices = [], []
    board = ProcessBoard(Slab(1), 0, notices.append)

    def recipes(n):
        made.append(n)
        return [Recipe(np.zeros((1, 1), dtype=np.uint64), np.arange(1), 1)] * n

    with Prefetch([NEVER] * 3, recipes=lambda: recipes(3)) as first:
        board.post(first)
        assert made == [] and notices == [] and first.claims is None
        first.take(0)
        board.want()
        (_, serial, _, _), = notices
        assert made == [3] and board._slab.states[0, serial % 2, :3].tolist() == [
            shared_pieces.TAKEN, shared_pieces.PENDING, shared_pieces.PENDING]
    board.want()  # the first has left: nothing to share now
    assert len(notices) == 1
    with Prefetch([NEVER] * 2, recipes=lambda: recipes(2)) as second:
        board.post(second)  # asked before: shared at once
        assert made == [3, 2] and len(notices) == 2
    with Prefetch([NEVER] * 2, recipes=lambda: recipes(2)) as third:
        board.post(third)
    assert made == [3, 2] and len(notices) == 2


def test_the_last_pieces_get_slots_until_a_half_is_full(monkeypatch) -> None:
    monkeypatch.setattr(shared_pieces, "INBOX", 2 * 4096)
    big = Recipe(np.zeros((30, 2), dtype=np.uint64), np.arange(5), 100)  # 30*2*8 + 5*1*8 + 40 = 560 bytes
    offsets, shared, used = slots([big] * 10)
    assert shared.tolist() == [False] * 5 + [True] * 5 and used <= 4096
    assert offsets[9] == 0 and list(np.diff(offsets[5:])) == [-offsets[8]] * 4
