"""The slab of claims through which worker processes share a step's pieces (nassau.engine.shared_pieces): a helper
claims from the last piece, the owner from the first, neither gets a piece the other has, and a closed offer gives
nothing more. (A run that relays pieces between processes: tests/test_processes.py.)"""
from __future__ import annotations

from nassau.engine.shared_pieces import Slab


def test_the_owner_and_a_helper_claim_each_piece_once_from_the_two_ends() -> None:
    slab = Slab(2)
    slab.open(1, 7, 4)
    assert slab.has_pending(1, 7, 4) and not slab.has_pending(1, 6, 4)
    assert slab.claim_last(1, 7, 4) == 3
    assert slab.take(1, 7, 0) and not slab.take(1, 7, 3)  # the owner's first; the helper's last, not the owner's
    assert slab.claim_last(1, 7, 4) == 2
    assert slab.take(1, 7, 1)
    assert slab.claim_last(1, 7, 4) == -1 and not slab.has_pending(1, 7, 4)


def test_a_closed_or_replaced_offer_gives_a_helper_nothing() -> None:
    slab = Slab(2)
    slab.open(0, 1, 3)
    slab.close(0, 1)
    assert slab.claim_last(0, 1, 3) == -1
    slab.open(0, 2, 3)
    assert slab.claim_last(0, 1, 3) == -1  # an order for the old offer, arriving late
    assert slab.claim_last(0, 2, 3) == 2
    slab.close(0, 1)  # the old offer's close does not close the new one
    assert slab.claim_last(0, 2, 3) == 1
