"""Massey products: the reference's massey goldens byte for byte, the classical brackets of Ext(S) with zero
indeterminacy on both algorithms' resolutions, symmetry, juggling with products, and undefined brackets refused."""
from __future__ import annotations

import numpy as np
import pytest

from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.products.ext_algebra import ExtAlgebra, unit_module
from nassau.products.ext_class import ExtClass
from nassau.products.massey import MasseyError, massey_products, shift_of
from tests.helpers import golden, run_cli, run_engine

H3, H0_4 = ExtClass(7, 1, (1,)), ExtClass(0, 4, (1,))


def algebra(module: str, algorithm: str, stem: int, max_s: int) -> tuple[ExtAlgebra, Region]:
    res, region = run_engine(module, stem=stem, max_s=max_s, algorithm=algorithm)
    if module == "S_2":
        return ExtAlgebra(res, res), region
    unit = resolve(unit_module(res.module), Region(max_s=5, min_degree=0, max_stem=8), algorithm)
    return ExtAlgebra(res, unit), region


@pytest.mark.parametrize("module,algorithm", [("S_2", "standard"), ("S_2", "nassau"), ("C2", "standard"),
                                              ("Ceta", "standard")])
def test_adams_periodicity_brackets_are_the_references(module: str, algorithm: str) -> None:
    """P(x) = <h3, h0^4, x>. The C2 and Ceta goldens come from the reference's standard resolution; Nassau's
    algorithm chooses another basis of Ext(Ceta) at (17, 5), so only S_2 is compared on both."""
    alg, region = algebra(module, algorithm, 26, 12)
    text = "".join(b.line() + "\n" for b in massey_products(alg, H3, H0_4, region))
    assert text == golden(f"massey-{module}-P")


def test_cli_prints_the_golden() -> None:
    out = run_cli("massey", "C2", "--a", "7,1,[1]", "--b", "0,4,[1]", "--stem", "26", "--max-s", "12",
                  "--algorithm", "standard", "--quiet")
    assert out.returncode == 0, out.stderr
    assert out.stdout.decode() == golden("massey-C2-P")


def bracket(alg: ExtAlgebra, region: Region, a: ExtClass, b: ExtClass, c: ExtClass):
    """<a, b, c> as (offset, indeterminacy), or None when it contains 0 (then it is not listed)."""
    for br in massey_products(alg, a, b, region):
        if br.c == c:
            return br.offset, br.indeterminacy
    return None


def h(i: int) -> ExtClass:
    return ExtClass((1 << i) - 1, 1, (1,))


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_classical_brackets(algorithm: str) -> None:
    alg, region = algebra("S_2", algorithm, 16, 6)
    assert bracket(alg, region, h(0), h(1), h(0)) == ((1,), ())  # <h0, h1, h0> = h1^2
    assert bracket(alg, region, h(1), h(0), h(1)) == ((1,), ())  # <h1, h0, h1> = h0 h2
    assert bracket(alg, region, h(1), h(2), h(1)) == ((1,), ())  # <h1, h2, h1> = h2^2
    assert bracket(alg, region, h(2), h(1), h(2)) == ((1,), ())  # <h2, h1, h2> = h1 h3
    assert bracket(alg, region, h(1), h(0), ExtClass(6, 2, (1,))) == ((1,), ())  # c0 = <h1, h0, h2^2>


def test_symmetry_and_juggling() -> None:
    alg, region = algebra("S_2", "nassau", 20, 8)
    # <a, b, c> = <c, b, a> whenever both are defined: every pair of h_i, h_j with h_i h_j = 0 and c at low stems.
    checked = 0
    for a, b in [(h(0), h(1)), (h(1), h(0)), (h(1), h(2)), (h(2), h(1)), (h(2), h(3)), (h(3), h(2))]:
        for br in massey_products(alg, a, b, region):
            c = br.c
            if c.s != 1 or c.n not in (0, 1, 3, 7):
                continue
            other = bracket(alg, region, c, b, a)
            assert other == (br.offset, br.indeterminacy), (a, b, c)
            checked += 1
    assert checked >= 3
    # P(h1) h1 = P(h1^2): multiply the bracket by h1 (zero indeterminacy on both sides).
    p_h1 = bracket(alg, region, H3, H0_4, h(1))
    p_h1sq = bracket(alg, region, H3, H0_4, ExtClass(2, 2, (1,)))
    prod = alg.products(h(1), [(9, 5)])[(9, 5)]
    assert p_h1 == ((1,), ()) and p_h1sq == ((1,), ())
    assert (np.array(p_h1[0]) @ prod % 2).tolist() == list(p_h1sq[0])


def test_undefined_brackets_are_refused() -> None:
    alg, region = algebra("S_2", "standard", 10, 5)
    with pytest.raises(MasseyError, match="is not zero"):
        massey_products(alg, h(0), h(0), region)  # h0 h0 != 0
    out = run_cli("massey", "S_2", "--a", "0,1,[1]", "--b", "0,1,[1]", "--stem", "10", "--max-s", "5", "--quiet")
    assert out.returncode == 2 and out.stderr.decode().count("\n") == 1 and b"is not zero" in out.stderr


def test_shift() -> None:
    assert shift_of(H3, H0_4) == (8, 4)
