"""Marshalling: the prefix-sum decode hits every (row, term, matrix) triple exactly once, launches split under
the byte and thread limits (tiny limits here, so splits happen), and the flat buffer round-trips."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gpu import marshal


def random_layout(rng: np.random.Generator, rows: int, lists: int, slots: int):
    """Random term lists (some empty), row -> list, and matrices per row (>= 1, as every R has one)."""
    sizes = rng.integers(0, 6, size=lists)
    term_start = marshal.prefix(sizes)
    row_terms = rng.integers(0, lists, size=rows)
    slot_counts = rng.integers(1, 40, size=slots)
    row_counts = slot_counts[rng.integers(0, slots, size=rows)]
    return term_start, row_terms, row_counts


def expected_triples(term_start, row_terms, row_counts) -> Counter:
    return Counter((i, q, a) for i in range(len(row_terms))
                   for q in range(term_start[row_terms[i]], term_start[row_terms[i] + 1])
                   for a in range(row_counts[i]))


def decoded_triples(row_prefix, term_start, row_terms, row_counts, group, launches) -> Counter:
    got: Counter = Counter()
    for launch in launches:
        t = np.arange(launch.thread0, launch.thread1)
        rows, terms, first = marshal.decode(row_prefix, row_terms, term_start, row_counts, group, t,
                                            launch.row0, launch.row1)
        assert np.all((rows >= launch.row0) & (rows < launch.row1))
        for i, q, a0 in zip(rows.tolist(), terms.tolist(), first.tolist()):
            for a in range(a0, min(a0 + group, int(row_counts[i]))):
                got[(i, q, a)] += 1
    return got


@pytest.mark.parametrize("group", [1, 2, 4, 7])
def test_every_triple_decoded_exactly_once(rng: np.random.Generator, group: int) -> None:
    term_start, row_terms, row_counts = random_layout(rng, rows=60, lists=12, slots=9)
    row_prefix = marshal.prefix(marshal.row_threads(row_terms, term_start, row_counts, group))
    launches = marshal.split(row_prefix, row_bytes=8, block_bytes=1 << 20)
    assert len(launches) == 1
    got = decoded_triples(row_prefix, term_start, row_terms, row_counts, group, launches)
    assert got == expected_triples(term_start, row_terms, row_counts)


@pytest.mark.parametrize("row_bytes, block_bytes, max_threads", [(8, 8 * 5, 1 << 40), (8, 1 << 20, 37),
                                                                 (24, 50, 11), (100, 10, 1)])
def test_split_respects_both_limits_and_loses_nothing(rng: np.random.Generator, row_bytes: int, block_bytes: int,
                                                      max_threads: int) -> None:
    term_start, row_terms, row_counts = random_layout(rng, rows=50, lists=10, slots=7)
    group = 3
    row_prefix = marshal.prefix(marshal.row_threads(row_terms, term_start, row_counts, group))
    launches = marshal.split(row_prefix, row_bytes, block_bytes, max_threads)
    assert len(launches) > 1
    rows_cap = max(1, block_bytes // row_bytes)
    for launch in launches:
        assert 0 < launch.threads <= max_threads
        assert launch.rows <= rows_cap
    # Contiguous cover of all threads.
    assert launches[0].thread0 == 0 and launches[-1].thread1 == row_prefix[-1]
    assert all(a.thread1 == b.thread0 for a, b in zip(launches, launches[1:]))
    got = decoded_triples(row_prefix, term_start, row_terms, row_counts, group, launches)
    assert got == expected_triples(term_start, row_terms, row_counts)


def test_default_thread_limit_is_below_2_32() -> None:
    assert marshal.MAX_THREADS < 2**32
    # A batch of 2^33 threads is cut into launches of fewer than 2^32 each (arithmetic only, no threads run).
    row_prefix = marshal.prefix(np.full(4, 2**31, dtype=np.int64))
    launches = marshal.split(row_prefix, row_bytes=8, block_bytes=1 << 30)
    assert all(launch.threads < 2**32 for launch in launches)
    assert sum(launch.threads for launch in launches) == 2**33


def test_empty_batch_has_no_launch() -> None:
    assert marshal.split(marshal.prefix(np.zeros(5, dtype=np.int64)), 8, 1 << 20) == []


def test_flat_buffer_round_trips() -> None:
    a = np.arange(5, dtype=np.int64)
    b = np.array([2**64 - 1, 3], dtype=np.uint64)
    c = np.array([-3, 7], dtype=np.int32)
    flat = marshal.Flat.pack(a=a, b=b, empty=np.zeros(0, dtype=np.int64), c=c)
    views = flat.views(flat.data.copy())
    assert np.array_equal(views["a"], a)
    assert np.array_equal(views["b"].view(np.uint64), b)
    assert len(views["empty"]) == 0
    assert views["c"].dtype == np.int64 and np.array_equal(views["c"], c)
    with pytest.raises(ValueError, match="d must hold integers"):
        marshal.Flat.pack(d=np.zeros(3, dtype=np.float64))
