"""Structural guards: matrix builds and steps make a bounded number of compiled product calls, and each shortcut
(signature pruning, skipped signatures, the kept kernel) shows in what the code does.

A revert to per-row or per-product Python work would multiply these counts by the number of rows.
"""
from __future__ import annotations

import numpy as np
import pytest

from algebra import free_map, products
from algebra.milnor_kernels import signature_forbid
from algebra.subalgebra import optimal_subalgebra
from nassau.nassau_step import step_nassau
from nassau.standard import step_standard
from tests.helpers import run_engine


def test_a_matrix_build_is_one_kernel_call() -> None:
    res, _ = run_engine("S_2", max_t=44, max_s=5, algorithm="standard")
    s, t = 4, 44
    rows = np.arange(res.free(s).dimension(t, res.free(s).gens_below(t)), dtype=np.int64)
    assert len(rows) > 300
    before = dict(products.COUNTERS)
    res.differential(s).matrix(t, rows, res.free(s - 1).gens_below(t + 1))
    assert products.COUNTERS["batch_calls"] - before["batch_calls"] == 1
    assert products.COUNTERS["products"] - before["products"] > len(rows)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, np.ndarray | None]]:
    """(restricted to a column map?, forbid) of every matrix build from now on."""
    seen: list[tuple[bool, np.ndarray | None]] = []
    real = free_map.run_batch

    def spy(out, batch, basis, col_map=None, forbid=None) -> None:
        seen.append((col_map is not None, forbid))
        real(out, batch, basis, col_map, forbid)

    monkeypatch.setattr(free_map, "run_batch", spy)
    return seen


def test_nassau_step_corrects_only_the_signatures_it_must(builds: list) -> None:
    """(2, 40) runs over B = [2, 2, 1]. The zero-signature kernel and image are two builds pruned to the zero
    signature; d(x) is one build; a signature whose part of d(x) is already zero costs no build, and each one
    corrected costs one (d on its rows, from which its block is cut)."""
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
    pruned = [forbid for restricted, forbid in builds if restricted]
    assert len(pruned) == 2 and all(np.array_equal(forbid, zero) for forbid in pruned)
    corrected = sum(1 for restricted, _ in builds if not restricted) - 1  # less d(x)
    assert 0 < corrected < visited
    assert len(builds) < rows / 5


def test_standard_step_is_two_builds() -> None:
    res, _ = run_engine("S_2", max_t=39, max_s=6, algorithm="standard")
    before = products.COUNTERS["batch_calls"]
    step_standard(res, 4, 40, keep_kernel=False)  # its own matrix, and ker d_3 in degree 40: two builds
    assert products.COUNTERS["batch_calls"] - before == 2


def test_a_standard_run_builds_each_matrix_once() -> None:
    """Each step keeps ker d_s for (s + 1, t), so a run over a rectangle builds one matrix per step that has rows
    (without the kept kernel it would build d_{s-1} again)."""
    before = products.COUNTERS["batch_calls"]
    res, region = run_engine("S_2", max_t=30, max_s=6, algorithm="standard")
    with_rows = sum(1 for s, t in region.bidegrees() if s >= 1 and res.free(s).dimension(t, res.free(s).gens_below(t)))
    assert products.COUNTERS["batch_calls"] - before == with_rows > 50
