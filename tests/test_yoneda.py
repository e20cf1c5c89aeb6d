"""Yoneda representatives: the reference's dimensions byte for byte (Milnor-basis standard resolution, and our Nassau
resolution against the reference's Nassau build), and the facts that make Y a representative: relations are
submodules carried by d, Y is exact with H_0 = M, and Y_s at the class's filtration is the class alone."""
from __future__ import annotations

import numpy as np
import pytest

from algebra.free.left_action import left_multiplication
from algebra.milnor.products import multiply_one
from fp import from_bool, gf2_matmul, row_reduce, to_bool, words
from nassau.products.ext_class import ExtClass
from nassau.products.yoneda import Yoneda, yoneda_lines
from tests.helpers import golden, run_cli, run_engine


@pytest.mark.parametrize("name,n,s,algorithm", [
    ("yoneda-g-S_2-milnor", 20, 4, "standard"),
    ("yoneda-g-S_2-nassau", 20, 4, "nassau"),
    pytest.param("yoneda-r-S_2-milnor", 30, 6, "standard", marks=pytest.mark.slow),
])
def test_the_references_dimensions(name: str, n: int, s: int, algorithm: str) -> None:
    res, _ = run_engine("S_2", stem=n, max_s=s, algorithm=algorithm)
    assert "".join(x + "\n" for x in yoneda_lines(Yoneda(res, ExtClass(n, s, (1,))))) == golden(name)


@pytest.mark.skip(reason="yoneda-*-adem: the reference's Adem-basis resolution has other differentials and another "
                         "basis order (the dimensions depend on both); nassau works in the Milnor basis only")
def test_adem_goldens() -> None:
    """Kept to say why yoneda-g-S_2-adem and yoneda-r-S_2-adem are not compared."""


def test_cli() -> None:
    out = run_cli("yoneda", "S_2", "--class", "20,4,[1]", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("yoneda-g-S_2-milnor")
    bad = run_cli("yoneda", "S_2", "--class", "20,4,[1,0]", "--quiet")
    assert bad.returncode == 2 and b"needs a vector of length 1" in bad.stderr


def induced(y: Yoneda, s: int, t: int) -> np.ndarray:
    """d_s on Y_s(t) -> Y_{s-1}(t) over the surviving bases (bool)."""
    src, tgt = y.surviving(s, t), y.surviving(s - 1, t)
    if not len(src) or not len(tgt):
        return np.zeros((len(src), len(tgt)), dtype=bool)
    images = y.relations[(s - 1, t)].reduce(y.differential(s, t, src))
    return to_bool(images, y.width(s - 1, t))[:, tgt]


def rank(m: np.ndarray) -> int:
    return len(row_reduce(from_bool(m), m.shape[1])) if m.size else 0


@pytest.mark.parametrize("n,s,algorithm", [(8, 3, "standard"), (14, 4, "nassau"), (20, 4, "standard")])
def test_the_representative_is_a_resolution_of_the_class(n: int, s: int, algorithm: str) -> None:
    res, _ = run_engine("S_2", stem=n, max_s=s, algorithm=algorithm)
    y = Yoneda(res, ExtClass(n, s, (1,)))
    # Relations are sub-A-modules (closed under the algebra generators) and d carries them into relations.
    for (q, t), rel in y.relations.items():
        if not rel.dim:
            continue
        for e in range(1, y.truncation[q] - t + 1):
            for theta in res.algebra.profile.generators(e):
                prod = left_multiplication(res.free(q), theta, t, y.ngens(q, t))
                moved = np.zeros((rel.dim, words(y.width(q, t + e))), dtype=np.uint64)
                part = gf2_matmul(rel.basis, prod, rel.ncols, res.free(q).dimension(t + e, y.ngens(q, t)))
                moved[:, :part.shape[1]] = part
                assert y.relations[(q, t + e)].contains_rows(moved).all(), (q, t, theta)
        if q > 0 and t <= y.truncation[q - 1]:
            images = res.differential(q).apply(t, rel.basis, y.ngens(q - 1, t))
            assert y.relations[(q - 1, t)].contains_rows(images).all(), (q, t)
    # Exact, with H_0 = M = F2 in degree 0, and Y_s the class alone at the top.
    for t in range(n + s + 1):
        for q in range(s + 1):
            dim = len(y.surviving(q, t))
            out = rank(induced(y, q, t)) if q > 0 else 0
            into = rank(induced(y, q + 1, t)) if q < s else 0
            homology = dim - out - into
            assert homology == (1 if (q, t) == (0, 0) else 0), (q, t)
    assert y.dimension(s) == 1 and len(y.surviving(s, n + s)) == 1


def test_left_multiplication_equals_one_product_at_a_time(rng) -> None:
    """The batched matrix of theta on F_s(t) against Milnor products made one at a time, on random rows."""
    res, _ = run_engine("S_2", stem=20, max_s=4)
    for _ in range(4):
        s, t = int(rng.integers(0, 5)), int(rng.integers(4, 20))
        fs, ngens = res.free(s), res.free(s).gens_below(t + 1)
        e = int(rng.integers(1, 9))
        thetas = [tuple(int(x) for x in res.algebra.element(e, k)) for k in range(res.algebra.dimension(e))]
        theta = thetas[int(rng.integers(len(thetas)))]
        dim = fs.dimension(t, ngens)
        if not dim:
            continue
        rows = np.unique(rng.integers(0, dim, size=min(dim, 12)))
        fast = to_bool(left_multiplication(fs, theta, t, ngens, rows), fs.dimension(t + e, ngens))
        off, out_off = fs.offsets(t, ngens), fs.offsets(t + e, ngens)
        for k, row in enumerate(rows):
            g = int(np.searchsorted(off, row, side="right") - 1)
            r = res.algebra.element(t - int(fs.gen_degrees[g]), int(row - off[g]))
            block = to_bool(multiply_one(res.algebra, theta, r)[None, :], int(out_off[g + 1] - out_off[g]))[0]
            want = np.zeros(fast.shape[1], dtype=bool)
            want[out_off[g]:out_off[g + 1]] = block
            assert np.array_equal(fast[k], want), (theta, s, t, int(row))
