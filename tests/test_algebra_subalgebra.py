"""Sub-Hopf algebras for Nassau's algorithm: the sequence, signatures and the vanishing-line choice."""
from __future__ import annotations

import itertools

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import unpack
from algebra.milnor.subalgebra import F2, Subalgebra, optimal_subalgebra, subalgebra_sequence


def test_sequence_starts_as_the_reference_lists() -> None:
    seq = [b.profile for b in itertools.islice(subalgebra_sequence(), 11)]
    assert seq == [(), (1,), (1, 1), (2, 1), (2, 1, 1), (2, 2, 1), (3, 2, 1), (3, 2, 1, 1), (3, 2, 2, 1),
                   (3, 3, 2, 1), (4, 3, 2, 1)]


def test_top_degrees() -> None:
    assert [Subalgebra(p).top_degree for p in [(2, 1), (3, 2, 1), (4, 3, 2, 1)]] == [6, 23, 72]


def test_signature_order() -> None:
    assert list(Subalgebra((2, 1)).signatures(6)) == [(1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1)]
    assert list(Subalgebra((2, 1)).signatures(3)) == [(1, 0), (2, 0), (3, 0), (0, 1)]
    assert list(F2.signatures(100)) == []


def test_vanishing_line_choice_for_the_sphere() -> None:
    # A(0) from t >= s + 2, A(1) from t >= 3(s+1) + 6, A(2) from t >= 7(s+1) + 23, A(3) from 15(s+1) + 72.
    s = 4
    assert optimal_subalgebra(s, s + 1) == F2
    assert optimal_subalgebra(s, s + 2).profile == (1,)
    assert optimal_subalgebra(s, 3 * (s + 1) + 6).profile == (2, 1)
    assert optimal_subalgebra(s, 7 * (s + 1) + 22).profile != (3, 2, 1)
    assert optimal_subalgebra(s, 7 * (s + 1) + 23).profile == (3, 2, 1)
    assert optimal_subalgebra(s, 15 * (s + 1) + 72).profile == (4, 3, 2, 1)


def test_signatures_partition_each_degree() -> None:
    basis = MilnorBasis()
    b = Subalgebra((2, 1))
    for d in range(0, 40):
        words = basis.words(d)
        classes = b.signature_classes(words)
        sigs = [(), *b.signatures(d)]
        counts = [int(np.sum(classes == np.uint64(b.signature_word(sig)))) for sig in sigs]
        assert sum(counts) == len(words)
        for w, c in zip(words, classes):
            r = unpack(int(w))
            sig = tuple(r[i] % (1 << h) if i < len(r) else 0 for i, h in enumerate(b.profile))
            assert int(c) == b.signature_word(sig)
