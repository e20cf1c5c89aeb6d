"""Milnor basis: order (a wire format), dimensions, ranks, packing and text."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from algebra.milnor.basis import MilnorBasis, format_element, format_sq, parse_element
from algebra.milnor.odd_basis import OddMilnorBasis
from algebra.milnor.ppart import degree, pack, unpack
from algebra.milnor.profile import FULL, Profile, a_n
from algebra.unstable.basis import UnstableBasis

DATA = Path(__file__).parent / "data" / "sseq"


def test_dimensions_match_reference_through_125() -> None:
    lines = (DATA / "algebra_dim").read_text().splitlines()[1:]
    expected = {int(k.split("_")[1]): int(v) for k, v in (line.split(" = ") for line in lines)}
    basis = MilnorBasis()
    assert len(expected) == 126
    assert {n: basis.dimension(n) for n in expected} == expected
    assert basis.dimension(40) == 82 and basis.dimension(100) == 1189


def test_order_is_the_references() -> None:
    basis = MilnorBasis()
    as_tuples = lambda d: [unpack(int(w)) for w in basis.words(d)]  # noqa: E731
    assert as_tuples(3) == [(3,), (0, 1)]
    assert as_tuples(4) == [(4,), (1, 1)]
    assert as_tuples(6) == [(6,), (3, 1), (0, 2)]
    assert as_tuples(7) == [(7,), (4, 1), (1, 2), (0, 0, 1)]


@pytest.mark.parametrize("profile,top", [(FULL, 90), (a_n(1), 6), (a_n(2), 23), (a_n(3), 72),
                                         (Profile((0,), False), 40)])
def test_rank_inverts_enumeration(profile: Profile, top: int) -> None:
    basis = MilnorBasis(profile)
    for d in range(top + 1):
        for i in range(basis.dimension(d)):
            r = basis.element(d, i)
            assert degree(r) == d and profile.contains(r)
            assert basis.index(r) == i


def test_profile_bases_are_the_filtered_full_order() -> None:
    full, a2 = MilnorBasis(), MilnorBasis(a_n(2))
    assert sum(a2.dimension(d) for d in range(40)) == 64
    assert sum(MilnorBasis(a_n(1)).dimension(d) for d in range(10)) == 8
    for d in range(24):
        kept = [unpack(int(w)) for w in full.words(d) if a_n(2).contains(unpack(int(w)))]
        assert kept == [a2.element(d, i) for i in range(a2.dimension(d))]


@pytest.mark.parametrize("profile", [a_n(0), a_n(1), a_n(2), a_n(3), Profile((0,), False), Profile((2, 0, 1))])
@pytest.mark.parametrize("tops", [(0,), (7,), (5, 44)])
def test_index_map_sends_each_full_element_to_its_place_in_the_profile(profile: Profile, tops: tuple) -> None:
    """The vectorised index_map against a plain search, degree by degree, after one or two extends."""
    full, basis = MilnorBasis(), MilnorBasis(profile)
    for top in tops:
        basis.extend(top)
    top = tops[-1]
    assert len(basis.index_map_offset) == top + 2
    for d in range(top + 1):
        mine = [int(w) for w in basis.words(d)]
        expected = [mine.index(int(w)) if int(w) in mine else -1 for w in full.words(d)]
        assert basis.index_map[basis.index_map_offset[d]:basis.index_map_offset[d + 1]].tolist() == expected


def test_index_rejects_elements_outside_the_profile() -> None:
    with pytest.raises(ValueError, match="not in A\\(1\\)"):
        MilnorBasis(a_n(1)).index((4,))


@given(st.lists(st.integers(0, 60), max_size=6))
def test_pack_round_trip(r: list[int]) -> None:
    trimmed = list(r)
    while trimmed and trimmed[-1] == 0:
        trimmed.pop()
    assert unpack(pack(r)) == tuple(trimmed)


def test_pack_rejects_out_of_range() -> None:
    with pytest.raises(ValueError):
        pack([1] * 11)
    with pytest.raises(ValueError):
        pack([5000])


def test_parse_and_format() -> None:
    assert parse_element("Sq4") == (4,)
    assert parse_element("P(1, 1)") == (1, 1)
    assert parse_element("P(0, 0, 1, 0)") == (0, 0, 1)
    assert parse_element("1") == () and parse_element("Sq0") == ()
    assert format_element((1, 1)) == "P(1, 1)" and format_element(()) == "1"
    assert format_sq((4,)) == "Sq4" and format_sq((0, 1)) == "P(0, 1)"
    with pytest.raises(ValueError, match="cannot parse"):
        parse_element("Sq")


def test_every_basis_refuses_degrees_beyond_the_packed_fields_and_stays_usable() -> None:
    """One extend serves the three bases: each refuses a degree its packed words cannot hold, grows nothing, and
    still answers below it."""
    from algebra.milnor.ppart import MAX_DEGREE

    for basis in (MilnorBasis(FULL), OddMilnorBasis(3, FULL), UnstableBasis(MilnorBasis(FULL))):
        before = basis.max_degree
        with pytest.raises(ValueError, match=f"beyond the supported maximum {MAX_DEGREE}"):
            basis.extend(MAX_DEGREE + 1)
        assert basis.max_degree == before
        assert basis.dimension(8) > 0 and basis.max_degree == 8


@pytest.mark.parametrize("make", [lambda: MilnorBasis(FULL), lambda: MilnorBasis(a_n(2)),
                                  lambda: OddMilnorBasis(3, FULL), lambda: UnstableBasis(MilnorBasis(FULL))],
                         ids=["A", "A(2)", "A at p = 3", "unstable"])
def test_block_starts_are_running_dimensions_of_t_minus_each_degree(make) -> None:
    """The free modules' compiled block starts against 0 and the running sum of the plain dimension lookup, on
    fresh random degree lists reaching past t and past the basis's extent (each on a fresh basis, so the pass
    must extend it first)."""
    rng = np.random.default_rng()
    for _ in range(200):
        basis, t = make(), int(rng.integers(-5, 60))
        degs = np.sort(rng.integers(-10, 70, size=int(rng.integers(0, 12)))).astype(np.int64)
        twin = np.concatenate([[0], np.cumsum(make().dimensions_array(t - degs))]).astype(np.int64)
        got = basis.block_starts(t, degs)
        assert got.dtype == np.int64 and got.tolist() == twin.tolist()


def test_a_free_module_keeps_only_its_latest_block_starts() -> None:
    """FreeModule caches at most CACHED_STARTS block starts (keeping all held 6 MiB of S_3 through stem 200), and
    what it answers after dropping some is still the running dimensions, for old and new requests alike."""
    from algebra.free.free_module import CACHED_STARTS, FreeModule

    basis = MilnorBasis(FULL)
    basis.extend(80)
    module = FreeModule(basis)
    for d in range(0, 40, 3):
        module.add_generators(d, [f"x{d}"])
    rng = np.random.default_rng()
    asked = [(int(t), int(n)) for t, n in zip(rng.integers(0, 80, 400), rng.integers(0, module.num_gens + 1, 400))]
    for t, n in asked + asked[:50]:
        degs = module.gen_degrees[:n]
        twin = np.concatenate([[0], np.cumsum(basis.dimensions_array(t - degs))]).astype(np.int64)
        assert module.offsets(t, n).tolist() == twin.tolist()
    assert len(set(asked)) > CACHED_STARTS and len(module._offsets) == CACHED_STARTS
    assert module.offsets(80, 2) is module.offsets(80, 2)  # the newest is kept (t = 80 was never asked)
