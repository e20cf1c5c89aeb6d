"""Structural guards: matrix builds and steps make a bounded number of compiled product calls, and each shortcut
(signature pruning, skipped signatures, the kept kernel) shows in what the code does.

A revert to per-row or per-product Python work would multiply these counts by the number of rows.
"""
from __future__ import annotations

import numpy as np
import pytest

from algebra.free import free_map
from algebra.milnor import products
from algebra.milnor.kernels import signature_forbid
from algebra.milnor.subalgebra import optimal_subalgebra
from fp import augmented, field
from nassau.engine import standard
from nassau.engine.nassau_step import step_nassau
from nassau.engine.standard import step_standard
from tests.helpers import differentials, run_engine


def test_a_matrix_build_is_one_kernel_call() -> None:
    res, _ = run_engine("S_2", max_t=44, max_s=5, algorithm="standard")
    s, t = 4, 44
    rows = np.arange(res.free(s).dimension(t, res.free(s).gens_below(t)), dtype=np.int64)
    assert len(rows) > 300
    before = dict(products.COUNTERS)
    res.differential(s).matrix(t, rows, res.free(s - 1).gens_below(t + 1))
    assert products.COUNTERS["batch_calls"] - before["batch_calls"] == 1
    served = products.COUNTERS["products"] + products.COUNTERS["table_pairs"]
    assert served - before["products"] - before["table_pairs"] > len(rows)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, np.ndarray | None, bool]]:
    """(restricted to a column map?, forbid, handed product tables?) of every matrix build from now on."""
    seen: list[tuple[bool, np.ndarray | None, bool]] = []
    real = free_map.run_batch

    def spy(out, batch, basis, col_map=None, forbid=None, tables=None) -> None:
        seen.append((col_map is not None, forbid, tables is not None))
        real(out, batch, basis, col_map, forbid, tables)

    monkeypatch.setattr(free_map, "run_batch", spy)
    return seen


def test_nassau_step_corrects_only_the_signatures_it_must(builds: list) -> None:
    """(2, 40) runs over B = [2, 2, 1]. The zero-signature kernel and image are two builds pruned to the zero
    signature; d(x) is one build; a signature whose part of d(x) is already zero costs no build, and each one
    corrected costs one (d on its rows, from which its block is cut). Every build of d_1 for the corrections reads
    the product tables found once for the step (no lookups of its own); the kernel block finds its own rows'."""
    res, _ = run_engine("S_2", max_t=39, max_s=2, algorithm="nassau")  # everything (2, 40) needs, not (2, 40)
    s, t = 2, 40
    sub = optimal_subalgebra(s, t - res.module.max_degree)
    assert sub.profile == (2, 2, 1)
    rows = res.free(s - 1).dimension(t, res.free(s - 1).gens_below(t))
    builds.clear()
    assert step_nassau(res, s, t) > 0 and rows > 250
    # Signatures with columns in F_{s-2} in degree t: those the correction loop visits.
    below = res.free(s - 2)
    classes = below.basis_words(t, below.gens_below(t - 1))[1] & np.uint64(sub.mask)
    visited = sum(1 for sig in sub.signatures(t) if (classes == np.uint64(sub.signature_word(sig))).any())
    zero = signature_forbid(sub.profile, ())
    pruned = [forbid for restricted, forbid, _ in builds if restricted]
    assert len(pruned) == 2 and all(np.array_equal(forbid, zero) for forbid in pruned)
    corrected = sum(1 for restricted, _, _ in builds if not restricted) - 1  # less d(x)
    assert 0 < corrected < visited
    assert len(builds) < rows / 5
    assert sum(1 for _, _, given in builds if given) == len(builds) - 2  # all but the kernel block and d_2's image




def test_standard_step_is_two_builds() -> None:
    res, _ = run_engine("S_2", max_t=39, max_s=6, algorithm="standard")
    before = products.COUNTERS["batch_calls"]
    step_standard(res, 4, 40, keep_kernel=False)  # its own matrix, and ker d_3 in degree 40: two builds
    assert products.COUNTERS["batch_calls"] - before == 2


@pytest.mark.parametrize("module,algorithm", [("S_2", "standard"), ("A-mod-Sq1-Sq2", "change-of-rings")])
def test_a_standard_run_builds_each_matrix_once(module: str, algorithm: str) -> None:
    """Each step keeps ker d_s for (s + 1, t), so a run over a rectangle builds one matrix per step that has rows
    and columns (without the kept kernel it would build d_{s-1} again; the change of rings once did)."""
    before = products.COUNTERS["batch_calls"]
    res, region = run_engine(module, max_t=30, max_s=6, algorithm=algorithm)

    def dimension(s: int, t: int) -> int:
        return res.free(s).dimension(t, res.free(s).gens_below(t))

    with_rows = sum(1 for s, t in region.bidegrees() if s >= 1 and dimension(s, t) and dimension(s - 1, t))
    assert products.COUNTERS["batch_calls"] - before == with_rows > 20


def test_empty_steps_reduce_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over A(1) most jobs have F_s and F_{s-1} zero in degree t: they reach no reduction at all, and a job with
    rows but no columns (or columns but no rows) builds no [A | I] to reduce (standard.reduce_with_identity)."""
    outer, inner = [], []
    real_outer, real_inner = standard.reduce_with_identity, augmented.reduced_with_identity
    monkeypatch.setattr(standard, "reduce_with_identity", lambda a, n, f=None: outer.append((len(a), n))
                        or real_outer(a, n, f))
    monkeypatch.setattr(augmented, "reduced_with_identity", lambda a, n, f=None: inner.append((len(a), n))
                        or real_inner(a, n, f))
    res, region = run_engine("A-mod-Sq1-Sq2", max_t=30, max_s=6, algorithm="change-of-rings")
    jobs = list(region.bidegrees())
    empty = [(s, t) for s, t in jobs if s >= 1 and not res.free(s).dimension(t, res.free(s).gens_below(t))
             and not res.free(s - 1).dimension(t)]
    assert len(outer) == len(jobs) - len(empty) and len(empty) > len(jobs) / 4
    assert any(0 in shape for shape in outer) and not any(0 in shape for shape in inner)


@pytest.mark.parametrize("p", [2, 3])
@pytest.mark.parametrize("rows,ncols", [(0, 0), (0, 5), (3, 0), (70, 0)])
def test_an_empty_reduction_is_what_the_augmented_one_gives(p: int, rows: int, ncols: int) -> None:
    """The shortcut's twin: [A | I] reduced for real when A has no rows or no columns."""
    f = field(p)
    a = f.zeros(rows, ncols)
    pivots, kernel = augmented.reduce_with_identity(a, ncols, f)
    aug, all_pivots = augmented.reduced_with_identity(a, ncols, f)
    twin = aug.kernel(all_pivots, 1)
    assert pivots.tolist() == all_pivots[all_pivots < aug.segment_columns(1)[0]].tolist() == []
    assert kernel.ncols == twin.ncols == rows and kernel.pivots.tolist() == twin.pivots.tolist()
    assert np.array_equal(kernel.basis, twin.basis) and kernel.basis.dtype == twin.basis.dtype


@pytest.mark.parametrize("rows,ncols", [(1, 1), (5, 3), (12, 40), (63, 64), (64, 65), (65, 20), (100, 150), (128, 700)])
@pytest.mark.parametrize("kind", ["random", "low rank", "sparse"])
def test_a_small_reduction_is_what_the_augmented_one_gives(rows: int, ncols: int, kind: str,
                                                           rng: np.random.Generator) -> None:
    """The compiled small path (fp.m4ri.small_kernel) against its twin, [A | I] built and reduced as an Augmented,
    on fresh random matrices on both sides of word boundaries and up to the size that path takes."""
    from fp.packed import random_matrix
    from tests.oracles.fp_matrices import rank_deficient, sparse_matrix

    a = {"random": lambda: random_matrix(rows, ncols, rng),
         "low rank": lambda: rank_deficient(rows, ncols, max(1, min(rows, ncols) // 3), rng),
         "sparse": lambda: sparse_matrix(rows, ncols, 0.05, rng)}[kind]()
    pivots, kernel = augmented.reduce_with_identity(a.copy(), ncols)
    aug, all_pivots = augmented.reduced_with_identity(a.copy(), ncols)
    twin = aug.kernel(all_pivots, 1)
    assert pivots.tolist() == all_pivots[all_pivots < aug.segment_columns(1)[0]].tolist()
    assert kernel.ncols == twin.ncols == rows and kernel.pivots.tolist() == twin.pivots.tolist()
    assert np.array_equal(kernel.basis, twin.basis) and kernel.basis.dtype == twin.basis.dtype
    assert kernel.basis.flags.c_contiguous and len(pivots) + kernel.dim == rows


def test_a_small_step_builds_no_augmented_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reduction of a resolution over A(1) through t = 30 fits the compiled small path: no [A | I] is built
    as an Augmented (a revert to it makes one per nonempty step), and a large matrix still takes it."""
    built = []
    real = augmented.reduced_with_identity
    monkeypatch.setattr(augmented, "reduced_with_identity", lambda a, n, f=None: built.append(a.shape) or real(a, n, f))
    run_engine("A-mod-Sq1-Sq2", max_t=30, max_s=6, algorithm="change-of-rings")
    assert built == []
    big = field(2).zeros(200, 300)
    augmented.reduce_with_identity(big, 300)
    assert built == [(200, 5)]


@pytest.mark.parametrize("rows,ncols", [(1, 1), (5, 3), (12, 40), (63, 64), (64, 65), (65, 20), (100, 150)])
@pytest.mark.parametrize("kind", ["random", "low rank"])
def test_a_small_quasi_inverse_is_what_the_augmented_one_gives(rows: int, ncols: int, kind: str,
                                                               rng: np.random.Generator) -> None:
    """augmented.quasi_inverse_with_identity's compiled path against its twin, the Augmented [A | I]'s quasi-inverse,
    on fresh random matrices; and its preimages do map onto the image rows they stand for."""
    from fp.packed import random_matrix
    from tests.oracles.fp_matrices import rank_deficient

    a = random_matrix(rows, ncols, rng) if kind == "random" else \
        rank_deficient(rows, ncols, max(1, min(rows, ncols) // 3), rng)
    qi = augmented.quasi_inverse_with_identity(a.copy(), ncols)
    aug, pivots = augmented.reduced_with_identity(a.copy(), ncols)
    twin = aug.quasi_inverse(pivots, 0, 1)
    assert qi.pivots.tolist() == twin.pivots.tolist() and np.array_equal(qi.preimage, twin.preimage)
    assert qi.source_dim == twin.source_dim == rows
    f = field(2)
    images = f.matmul(qi.preimage, a, rows, ncols)  # x A for each preimage row x: the RREF image rows
    assert np.array_equal(images, aug.image(pivots, 0, 1))


def test_nassau_signatures_build_no_augmented_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through t = 30 the Nassau signature blocks (and the other reductions) of S_2 take the compiled small path
    wherever they fit it: an Augmented [A | I] is built only for a block past its size limit (one here), where a
    revert builds one per signature block."""
    from fp import m4ri

    built = []
    real = augmented.reduced_with_identity
    monkeypatch.setattr(augmented, "reduced_with_identity", lambda a, n, f=None: built.append(a.shape) or real(a, n, f))
    res, _ = run_engine("S_2", max_t=30, max_s=8, algorithm="nassau")
    assert sum(res.dims().values()) > 20 and len(built) <= 2
    assert not any(m4ri.gauss_fits(rows, words + (rows + 63) // 64) for rows, words in built)


def test_kept_basis_words_are_found_afresh(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    """basis_words keeps the last small degree asked: on a run of S_5 by Nassau's algorithm most calls find it kept
    (words_of, the twin that finds them afresh, runs far fewer times than basis_words is asked), and afterwards
    every degree of every module, asked in a random order with random generator counts, gives what words_of gives,
    bit for bit."""
    from algebra.free import free_module
    from algebra.free.free_module import FreeModule

    asked, found = [0], [0]
    real_ask, real_find = FreeModule.basis_words, FreeModule.words_of
    monkeypatch.setattr(FreeModule, "basis_words", lambda self, t, n=None: asked.__setitem__(0, asked[0] + 1)
                        or real_ask(self, t, n))
    monkeypatch.setattr(FreeModule, "words_of", lambda self, t, n: found.__setitem__(0, found[0] + 1)
                        or real_find(self, t, n))
    res, region = run_engine("S_5", stem=200, max_s=12, algorithm="nassau")
    assert found[0] < 0.6 * asked[0], (found, asked)
    monkeypatch.setattr(free_module, "WORDS_KEPT_UP_TO", -1)
    plain, _ = run_engine("S_5", stem=200, max_s=12, algorithm="nassau")
    assert differentials(res, 12) == differentials(plain, 12)
    for _ in range(300):
        s = int(rng.integers(0, region.max_s + 1))
        fs = res.free(s)
        t = int(rng.integers(s, region.t_limit + 1))
        n = int(rng.integers(0, fs.num_gens + 1))
        monkeypatch.setattr(free_module, "WORDS_KEPT_UP_TO", 4096)
        fs.basis_words(t, n)
        gens, words = fs.basis_words(t, n)  # kept, where small
        twin = real_find(fs, t, n)
        assert np.array_equal(gens, twin[0]) and np.array_equal(words, twin[1]), (s, t, n)
        assert not words.flags.writeable
