"""Admissible Adem monomials Sq^a1 ... Sq^ak written in the Milnor basis.

Module files may state relations in the Adem basis; the engine works only in the Milnor basis, where
Sq^a = P(a), so a monomial is the Milnor product of its factors.
"""
from __future__ import annotations

import re

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import degree
from algebra.milnor.products import multiply_one

_SQ = re.compile(r"^Sq\^?(\d+)$")


def parse_adem(text: str) -> tuple[int, ...]:
    """`Sq7 Sq3` -> (7, 3); raises ValueError unless it is an admissible monomial with positive exponents."""
    factors = []
    for word in text.split():
        m = _SQ.match(word)
        if not m or int(m.group(1)) == 0:
            raise ValueError(f"{text!r} is not an admissible Adem monomial (expected e.g. Sq7 Sq3)")
        factors.append(int(m.group(1)))
    if not factors or any(a < 2 * b for a, b in zip(factors, factors[1:], strict=False)):
        raise ValueError(f"{text!r} is not an admissible Adem monomial (each exponent must be at least twice the next)")
    return tuple(factors)


def adem_to_milnor(basis: MilnorBasis, factors: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The Milnor basis elements whose sum is Sq^a1 ... Sq^ak (in the basis's order)."""
    terms: list[tuple[int, ...]] = [(factors[-1],)]
    for a in reversed(factors[:-1]):
        d = a + degree(terms[0])
        acc = np.zeros((basis.dimension(d) + 63) // 64, dtype=np.uint64)
        for r in terms:
            acc ^= multiply_one(basis, (a,), r)
        bits = np.unpackbits(acc.view(np.uint8), bitorder="little")[: basis.dimension(d)]
        terms = [basis.element(d, int(k)) for k in np.nonzero(bits)[0]]
        if not terms:
            return []
    return terms
