"""F_p linear algebra (p odd) against galois.GF(p) and numpy, on fresh random matrices of many shapes."""
from __future__ import annotations

import galois
import numpy as np
import pytest

from fp import Augmented, Subspace, field
from fp.modp import COUNTERS, addmul_modp, row_reduce_modp

PRIMES = [3, 5, 7, 251]
SHAPES = [(1, 1), (1, 9), (9, 1), (12, 12), (30, 17), (17, 40), (64, 65), (3, 100)]


def random_matrix(rng: np.random.Generator, shape: tuple[int, int], p: int, rank: int | None = None) -> np.ndarray:
    if rank is None:
        return rng.integers(0, p, shape).astype(np.uint8)
    left = rng.integers(0, p, (shape[0], rank))
    right = rng.integers(0, p, (rank, shape[1]))
    return ((left @ right) % p).astype(np.uint8)


@pytest.mark.parametrize("p", PRIMES)
@pytest.mark.parametrize("shape", SHAPES)
def test_rref_matches_galois(rng: np.random.Generator, p: int, shape: tuple[int, int]) -> None:
    gf = galois.GF(p)
    for rank in (None, min(shape) // 2):
        a = random_matrix(rng, shape, p, rank)
        expected = np.array(gf(a.astype(np.int64)).row_reduce(), dtype=np.uint8)
        got = a.copy()
        pivots = row_reduce_modp(got, shape[1], p)
        assert np.array_equal(got, expected)
        nonzero = [int(np.nonzero(row)[0][0]) for row in expected if row.any()]
        assert pivots.tolist() == nonzero


def test_reference_examples() -> None:
    """REFERENCE-ODD-PRIMES 4.5: sseq's own doc examples."""
    a = np.array([[1, 3, 6], [0, 3, 4]], dtype=np.uint8)
    row_reduce_modp(a, 3, 7)
    assert a.tolist() == [[1, 0, 2], [0, 1, 6]]
    a = np.array([[1, 2, 1, 1, 0], [1, 0, 2, 1, 1], [2, 2, 0, 2, 1]], dtype=np.uint8)
    f3 = field(3)
    aug = Augmented(3, [5, 3], f3)
    aug.set_segment(0, a)
    aug.fill_identity(1)
    pivots = aug.row_reduce()
    assert aug.matrix.tolist() == [[1, 0, 2, 1, 1, 0, 1, 0], [0, 1, 1, 0, 1, 0, 2, 2], [0, 0, 0, 0, 0, 1, 1, 2]]
    assert aug.image(pivots, 0, 1).tolist() == [[1, 0, 2, 1, 1], [0, 1, 1, 0, 1]]
    assert aug.kernel(pivots, 1).basis.tolist() == [[1, 1, 2]]
    assert aug.quasi_inverse(pivots, 0, 1).preimage.tolist() == [[0, 1, 0], [0, 2, 2]]


@pytest.mark.parametrize("p", PRIMES)
def test_kernel_image_quasi_inverse(rng: np.random.Generator, p: int) -> None:
    f = field(p)
    for rows, cols in [(20, 13), (13, 20), (30, 30)]:
        a = random_matrix(rng, (rows, cols), p, rank=min(rows, cols) - 3)
        aug = Augmented(rows, [cols, rows], f)
        aug.set_segment(0, a)
        aug.fill_identity(1)
        pivots = aug.row_reduce()
        kernel = aug.kernel(pivots, 1)
        gf = galois.GF(p)
        assert kernel.dim == rows - np.linalg.matrix_rank(gf(a.astype(np.int64)))
        assert not ((kernel.basis.astype(np.int64) @ a) % p).any()
        assert np.array_equal(kernel.basis, np.array(gf(a.astype(np.int64)).left_null_space(), dtype=np.uint8))
        # image vectors: random combinations of rows of A, mapped back by the quasi-inverse
        x = rng.integers(0, p, (5, rows))
        y = ((x @ a) % p).astype(np.uint8)
        pre = aug.quasi_inverse(pivots, 0, 1).apply(y)
        assert np.array_equal((pre.astype(np.int64) @ a) % p, y)


@pytest.mark.parametrize("p", PRIMES)
def test_subspace(rng: np.random.Generator, p: int) -> None:
    f = field(p)
    space = Subspace(25, f)
    rows = random_matrix(rng, (6, 25), p)
    assert space.add_rows(rows[:3]) == 3 and space.add_rows(rows[3:]) == 3
    gf = galois.GF(p)
    expected = np.array(gf(rows.astype(np.int64)).row_reduce(), dtype=np.uint8)[:6]
    assert np.array_equal(space.basis, expected)
    combo = ((rng.integers(0, p, (4, 6)) @ rows) % p).astype(np.uint8)
    assert space.contains_rows(combo).all()
    outside = random_matrix(rng, (1, 25), p)
    outside[0, space.pivots] = 0
    outside[0, np.setdiff1d(np.arange(25), space.pivots)[0]] = 1
    assert not space.contains(outside[0])


@pytest.mark.parametrize("p", PRIMES)
def test_addmul_matches_numpy(rng: np.random.Generator, p: int) -> None:
    for m, k, n in [(1, 1, 1), (7, 30, 11), (40, 5000, 3)]:
        a, b, c = random_matrix(rng, (m, k), p), random_matrix(rng, (k, n), p), random_matrix(rng, (m, n), p)
        expected = (c.astype(np.int64) + a.astype(np.int64) @ b) % p
        addmul_modp(c, a, b, k, n, p)
        assert np.array_equal(c, expected)


def test_each_reduction_is_one_compiled_call(rng: np.random.Generator) -> None:
    before = COUNTERS["rref_calls"]
    row_reduce_modp(random_matrix(rng, (50, 50), 3), 50, 3)
    assert COUNTERS["rref_calls"] == before + 1


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="odd primes below 256"):
        row_reduce_modp(np.zeros((2, 2), dtype=np.uint8), 2, 257)
    with pytest.raises(ValueError, match="uint8"):
        row_reduce_modp(np.zeros((2, 2), dtype=np.int64), 2, 3)


@pytest.mark.parametrize("width", [1, 15, 16, 17, 100, 257])
def test_nibble_packing_puts_entry_j_in_nibble_j(rng: np.random.Generator, width: int) -> None:
    from fp.modp_nibbles import pack, unpack

    a = rng.integers(0, 16, size=(7, width), dtype=np.uint8)
    packed = pack(a)
    assert packed.shape == (7, (width + 15) // 16) and packed.dtype == np.uint64
    for i in range(7):
        for j in range(width):
            assert (int(packed[i, j // 16]) >> (4 * (j % 16))) & 15 == a[i, j]
    if width % 16:  # the padding nibbles are zero
        assert not (packed[:, -1] >> np.uint64(4 * (width % 16))).any()
    back = np.zeros_like(a)
    unpack(packed, back)
    assert np.array_equal(back, a)


@pytest.mark.parametrize("p", [3, 5, 7])
def test_nibble_rows_equal_byte_rows(rng: np.random.Generator, p: int) -> None:
    """The nibble-packed reduction (large matrices at p <= 7) against the byte kernel, on fresh random matrices
    including ones whose width is not a multiple of 16 and rank-deficient ones; and the dispatch uses it."""
    from fp.modp import NIBBLE_MIN_ROWS, _rref, inverses
    from fp.modp_nibbles import row_reduce_nibbles

    for shape in [(1, 1), (5, 33), (48, 17), (70, 150), (120, 241)]:
        for rank in (None, max(1, shape[0] // 3)):
            a = random_matrix(rng, shape, p, rank)
            by_bytes, by_nibbles = a.copy(), a.copy()
            assert np.array_equal(_rref(by_bytes, shape[1], p, inverses(p)),
                                  row_reduce_nibbles(by_nibbles, shape[1], p, inverses(p)))
            assert np.array_equal(by_bytes, by_nibbles)
    before = COUNTERS["nibble_calls"]
    row_reduce_modp(random_matrix(rng, (NIBBLE_MIN_ROWS, 60), p), 60, p)
    assert COUNTERS["nibble_calls"] == before + 1


@pytest.mark.parametrize("p", [3, 5, 7])
@pytest.mark.parametrize("shape", [(48, 1), (48, 16), (50, 17), (64, 63), (97, 200), (150, 40)])
@pytest.mark.parametrize("rank", [None, "low"])
def test_packed_image_and_kernel_equal_the_augmented_ones(rng: np.random.Generator, p: int,
                                                          shape: tuple[int, int], rank: str | None) -> None:
    """[A | I] packed straight from A (fp.modp_nibbles.image_and_kernel) against its twin, an Augmented [A | I]
    in bytes reduced by the byte kernel: the same image pivots, kernel rows and kernel pivots, on fresh random
    matrices (identity columns starting inside a word and at a word boundary, full and low rank)."""
    from fp.modp import _rref, image_and_kernel_modp, inverses

    a = random_matrix(rng, shape, p, None if rank is None else max(1, min(shape) // 3))
    image, kernel, kernel_pivots = image_and_kernel_modp(a, shape[1], p)
    aug = Augmented(shape[0], [shape[1], shape[0]], field(p))
    aug.set_segment(0, a)
    aug.fill_identity(1)
    pivots = _rref(aug.matrix, aug.ncols, p, inverses(p))
    twin = aug.kernel(pivots, 1)
    assert image.tolist() == pivots[pivots < shape[1]].tolist()
    assert kernel_pivots.tolist() == twin.pivots.tolist() and np.array_equal(kernel, twin.basis)
    assert kernel.dtype == np.uint8 and kernel.flags.c_contiguous and len(image) + len(kernel) == shape[0]


def test_a_large_step_at_p3_builds_no_byte_augmented_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reduction of S_3's resolution with NIBBLE_MIN_ROWS rows or more takes the packed path (a revert to the
    byte [A | I] builds an Augmented for each), the smaller ones one compiled call: no Augmented at all."""
    from fp import augmented
    from fp.modp import NIBBLE_MIN_ROWS
    from tests.helpers import run_engine

    built = []
    real = augmented.reduced_with_identity
    monkeypatch.setattr(augmented, "reduced_with_identity", lambda a, n, f=None: built.append(a.shape) or real(a, n, f))
    before = dict(COUNTERS)
    run_engine("S_3", max_t=90, max_s=8, algorithm="standard")
    assert COUNTERS["nibble_calls"] > before["nibble_calls"]
    assert COUNTERS["small_kernel_calls"] > before["small_kernel_calls"] + 100
    assert not built, [rows for rows, _ in built if rows >= NIBBLE_MIN_ROWS]


@pytest.mark.parametrize("p", [3, 5, 7, 251])
def test_a_small_image_and_kernel_is_the_augmented_ones(p: int, rng: np.random.Generator) -> None:
    """[A | I] reduced in one compiled call for fewer than NIBBLE_MIN_ROWS rows gives the Augmented path's image
    pivots and kernel (rows and pivots) bit for bit, on fresh random matrices: full rank, rank deficient, wide,
    tall; one call each, no Augmented."""
    from fp import augmented, field
    from fp.modp import NIBBLE_MIN_ROWS

    f = field(p)
    for _ in range(40):
        rows, ncols = int(rng.integers(1, NIBBLE_MIN_ROWS)), int(rng.integers(1, 60))
        a = rng.integers(0, p, (rows, ncols)).astype(np.uint8)
        if rows > 2 and rng.random() < 0.5:
            a[-1] = (a[0].astype(np.int64) * 2 + a[1]) % p
        before = COUNTERS["small_kernel_calls"]
        image, kernel = augmented.reduce_with_identity(a, ncols, f)
        assert COUNTERS["small_kernel_calls"] == before + 1
        aug, pivots = augmented.reduced_with_identity(a, ncols, f)
        twin = aug.kernel(pivots, 1)
        assert image.tolist() == pivots[pivots < aug.segment_columns(1)[0]].tolist()
        assert kernel.pivots.tolist() == twin.pivots.tolist() and np.array_equal(kernel.basis, twin.basis)


@pytest.mark.parametrize("p", [3, 5, 7])
@pytest.mark.parametrize("rows_per_block", [1, 5, 48])
@pytest.mark.parametrize("rank", [None, "low"])
def test_packing_row_blocks_equals_packing_the_whole_matrix(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator,
                                                            p: int, rows_per_block: int, rank: str | None) -> None:
    """A handed over in row blocks (fp.row_blocks, each packed as it is built) reduces as A whole does: the same
    image pivots, kernel rows and kernel pivots, on fresh random matrices cut into blocks of 1, 5 and 48 rows (the
    identity's 1 of a block's row i lands at column ncols + its first row + i); A whole is never built."""
    from fp import RowBlocks, row_blocks
    from fp.modp import image_and_kernel_modp

    shape = (97, 61)
    a = random_matrix(rng, shape, p, None if rank is None else 20)
    monkeypatch.setattr(row_blocks, "BLOCK_BYTES", rows_per_block * shape[1])
    asked = []
    parts = RowBlocks(shape[0], shape[1], lambda r0, r1: asked.append((r0, r1)) or a[r0:r1].copy())
    image, kernel, kernel_pivots = image_and_kernel_modp(parts, shape[1], p)
    twin = image_and_kernel_modp(a, shape[1], p)
    assert image.tolist() == twin[0].tolist() and kernel_pivots.tolist() == twin[2].tolist()
    assert np.array_equal(kernel, twin[1])
    assert asked == [(r0, min(shape[0], r0 + rows_per_block)) for r0 in range(0, shape[0], rows_per_block)]


def test_a_large_step_at_p3_never_builds_its_differential_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """S_3's reductions with NIBBLE_MIN_ROWS rows or more take d_s in row blocks (a revert builds each whole
    first), the smaller ones whole; with blocks of 4 KiB (many a step) every differential is the one built whole."""
    from fp import RowBlocks, row_blocks
    from fp.modp import NIBBLE_MIN_ROWS
    from tests.helpers import run_engine

    whole, region = run_engine("S_3", max_t=90, max_s=8, algorithm="standard")
    monkeypatch.setattr(row_blocks, "BLOCK_BYTES", 4096)
    built_whole, in_blocks = [], []
    real_whole, real_blocks = RowBlocks.whole, RowBlocks.blocks
    monkeypatch.setattr(RowBlocks, "whole", lambda self: built_whole.append(len(self)) or real_whole(self))
    monkeypatch.setattr(RowBlocks, "blocks", lambda self: in_blocks.append(len(self)) or real_blocks(self))
    res, _ = run_engine("S_3", max_t=90, max_s=8, algorithm="standard")
    assert in_blocks and min(in_blocks) >= NIBBLE_MIN_ROWS and max(built_whole) < NIBBLE_MIN_ROWS
    for s in range(1, region.max_s + 1):
        ours, twin = res.differential(s), whole.differential(s)
        assert ours.num_outputs == twin.num_outputs > 0
        for g in range(ours.num_outputs):
            assert np.array_equal(ours.output(g)[0], twin.output(g)[0]) and ours.output(g)[1] == twin.output(g)[1]
