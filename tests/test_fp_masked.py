"""Column moves between a full basis and a sub-basis against a plain numpy loop twin; pext/pdep twins, ctz, popcount."""
from __future__ import annotations

import numpy as np
import pytest

from fp import bits
from fp.masked import add_masked, add_unmasked, gather_columns, scatter_columns
from fp.packed import random_matrix, to_bool, words, zeros


def make_mask(kind: str, full: int, sub: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "sorted":
        return np.sort(rng.choice(full, sub, replace=False))
    if kind == "runs":  # long stretches of consecutive columns
        keep = np.zeros(full, dtype=bool)
        start = 0
        while start < full:
            length = int(rng.integers(1, 150))
            keep[start : start + length] = rng.random() < 0.5
            start += length
        return np.flatnonzero(keep)
    if kind == "unsorted":
        return rng.permutation(np.sort(rng.choice(full, sub, replace=False)))
    return rng.integers(0, full, sub)  # "repeats": duplicates allowed, XOR semantics


def gather_twin(dst_bits: np.ndarray, src_bits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = dst_bits.copy()
    for i, col in enumerate(mask):
        out[:, i] ^= src_bits[:, col]
    return out


def scatter_twin(dst_bits: np.ndarray, src_bits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    out = dst_bits.copy()
    for i, col in enumerate(mask):
        out[:, col] ^= src_bits[:, i]
    return out


CASES = [(1, 10, 4), (3, 64, 64), (5, 200, 150), (40, 1000, 300), (7, 5000, 2500), (2, 130, 0), (70, 3000, 1200)]


@pytest.mark.parametrize("rows,full,sub", CASES)
@pytest.mark.parametrize("kind", ["sorted", "runs", "unsorted", "repeats"])
def test_moves_match_loop_twin(rows: int, full: int, sub: int, kind: str, rng: np.random.Generator) -> None:
    mask = make_mask(kind, full, sub, rng)
    sub = len(mask)
    f, s = random_matrix(rows, full, rng), random_matrix(rows, sub, rng)
    f_bits, s_bits = to_bool(f, full), to_bool(s, sub)

    d = s.copy()
    add_masked(d, f, mask)
    np.testing.assert_array_equal(to_bool(d, sub), gather_twin(s_bits, f_bits, mask))
    assert not to_bool(d, d.shape[1] * 64)[:, sub:].any()

    d = f.copy()
    add_unmasked(d, s, mask)
    np.testing.assert_array_equal(to_bool(d, full), scatter_twin(f_bits, s_bits, mask))

    np.testing.assert_array_equal(to_bool(gather_columns(f, mask), sub), f_bits[:, mask])
    scattered = scatter_columns(s, mask, full)
    assert scattered.shape == (rows, words(full))
    np.testing.assert_array_equal(to_bool(scattered, full), scatter_twin(np.zeros_like(f_bits), s_bits, mask))


def test_gather_then_scatter_round_trip(rng: np.random.Generator) -> None:
    mask = make_mask("sorted", 4000, 1700, rng)
    f = random_matrix(33, 4000, rng)
    back = scatter_columns(gather_columns(f, mask), mask, 4000)
    expected = np.zeros((33, 4000), dtype=bool)
    expected[:, mask] = to_bool(f, 4000)[:, mask]
    np.testing.assert_array_equal(to_bool(back, 4000), expected)


def pext_by_loop(x: int, m: int) -> int:
    """The bits of x at the set positions of m, packed low: Python integers, no kernel."""
    places = [i for i in range(64) if m >> i & 1]
    return sum((x >> i & 1) << k for k, i in enumerate(places))


def pdep_by_loop(x: int, m: int) -> int:
    places = [i for i in range(64) if m >> i & 1]
    return sum((x >> k & 1) << i for k, i in enumerate(places))


def test_pext_pdep_both_versions_match_a_python_loop(rng: np.random.Generator) -> None:
    """The instruction (with BMI2) and the software loop, each against Python: where the host lacks BMI2, pext is
    pext_soft, so comparing the two with each other would prove nothing."""
    xs = rng.integers(0, np.iinfo(np.uint64).max, 1500, dtype=np.uint64, endpoint=True)
    ms = rng.integers(0, np.iinfo(np.uint64).max, 1500, dtype=np.uint64, endpoint=True)
    ms[:50] = 0
    ms[50:100] = np.iinfo(np.uint64).max
    for x, m in zip(xs, ms, strict=True):
        extracted, deposited = pext_by_loop(int(x), int(m)), pdep_by_loop(int(x), int(m))
        assert int(bits.pext(x, m)) == int(bits.pext_soft(x, m)) == extracted
        assert int(bits.pdep(x, m)) == int(bits.pdep_soft(x, m)) == deposited


def test_ctz(rng: np.random.Generator) -> None:
    xs = rng.integers(1, np.iinfo(np.uint64).max, 2000, dtype=np.uint64, endpoint=True)
    xs <<= rng.integers(0, 63, 2000).astype(np.uint64)
    for x in xs:
        if x:
            assert bits.ctz(x) == (int(x) & -int(x)).bit_length() - 1
    assert bits.ctz(np.uint64(0)) == 64 and bits.ctz(np.uint64(1) << np.uint64(63)) == 63


def test_popcount(rng: np.random.Generator) -> None:
    xs = rng.integers(0, np.iinfo(np.uint64).max, 2000, dtype=np.uint64, endpoint=True)
    xs >>= rng.integers(0, 64, 2000).astype(np.uint64)
    for x in xs:
        assert bits.popcount(x) == int(x).bit_count()
    assert bits.popcount(np.uint64(0)) == 0 and bits.popcount(np.uint64(np.iinfo(np.uint64).max)) == 64


def test_pext_by_hand() -> None:
    assert bits.pext_soft(np.uint64(0b1011), np.uint64(0b1110)) == 0b101
    assert bits.pdep_soft(np.uint64(0b101), np.uint64(0b11100)) == 0b10100


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: add_masked(zeros(2, 10), zeros(2, 100), np.array([0, 128])), r"\[0, 128\)"),
        (lambda: add_masked(zeros(2, 10), zeros(2, 100), np.array([-1])), r"\[0, 128\)"),
        (lambda: add_masked(zeros(2, 1), zeros(2, 100), np.arange(65)), "65 entries"),
        (lambda: add_masked(zeros(3, 10), zeros(2, 100), np.arange(3)), "rows"),
        (lambda: add_masked(zeros(2, 10), zeros(2, 100), [0, 1]), "1-D integer"),
        (lambda: add_masked(zeros(2, 10), zeros(2, 100), np.array([0.0])), "1-D integer"),
        (lambda: add_unmasked(zeros(2, 100), zeros(2, 10), np.array([200])), r"\[0, 128\)"),
        (lambda: add_unmasked(np.zeros((2, 2), np.int64), zeros(2, 10), np.array([1])), "dtype"),
        (lambda: scatter_columns(zeros(2, 3), np.array([0, 5, 99]), 90), "ncols=90"),
        (lambda: gather_columns(zeros(3, 200).T, np.array([0])), "C-contiguous"),
    ],
)
def test_bad_input_raises(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
