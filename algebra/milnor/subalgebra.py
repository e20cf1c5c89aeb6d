"""Finite sub-Hopf algebras B of A and signatures of Milnor basis elements (Nassau's algorithm).

The signature of P(R) with respect to B = [h_1, h_2, ...] is (r_1 mod 2^{h_1}, r_2 mod 2^{h_2}, ...),
the "B-part" of R. On packed words it is `word & mask`, so a signature class of a basis is one
vectorised comparison. Zero-signature elements model A//B, which is why the zero-signature part of a
resolution is small and exact above B's vanishing line.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from algebra.milnor.kernels import signature_forbid
from algebra.milnor.ppart import FIELD_SHIFT, XI_DEGREES, pack


@dataclass(frozen=True)
class Subalgebra:
    profile: tuple[int, ...] = ()

    @property
    def mask(self) -> int:
        """Bits of a packed word that hold its signature."""
        m = 0
        for i, h in enumerate(self.profile):
            m |= ((1 << h) - 1) << int(FIELD_SHIFT[i])
        return m

    @property
    def top_degree(self) -> int:
        """Degree of B's top class: sum (2^{h_i} - 1)(2^i - 1)."""
        return sum(((1 << h) - 1) * int(XI_DEGREES[i]) for i, h in enumerate(self.profile))

    @property
    def is_an(self) -> bool:
        n = len(self.profile)
        return list(self.profile) == list(range(n, 0, -1))

    def signature_word(self, sig: tuple[int, ...]) -> int:
        return pack(sig)

    def forbid(self, sig: tuple[int, ...] | None) -> np.ndarray:
        """What the product kernel prunes when only products of signature sig (None: the zero one) are wanted."""
        return signature_forbid(self.profile, () if sig is None else sig)

    def signatures(self, max_degree: int) -> Iterator[tuple[int, ...]]:
        """Nonzero signatures of degree <= max_degree, coordinate 0 fastest (Nassau's Lemma 2.4 order)."""
        if not self.profile:
            return
        bounds = [(1 << h) for h in self.profile]
        sig = [0] * len(bounds)
        while True:
            i = 0
            while i < len(sig):
                sig[i] += 1
                if sig[i] < bounds[i]:
                    break
                sig[i] = 0
                i += 1
            if i == len(sig):
                return
            if sum(v * int(XI_DEGREES[k]) for k, v in enumerate(sig)) <= max_degree:
                yield tuple(sig)

    def signature_classes(self, words: np.ndarray) -> np.ndarray:
        """Signature word (packed) of each packed p-part."""
        return words & np.uint64(self.mask)

    def describe(self) -> str:
        if not self.profile:
            return "F2"
        if self.is_an:
            return f"A({len(self.profile) - 1})"
        return str(list(self.profile))


F2 = Subalgebra(())


def subalgebra_sequence() -> Iterator[Subalgebra]:
    """F2, A(0), [1,1], A(1), [2,1,1], [2,2,1], A(2), ...: each step adds one small piece."""
    prof: list[int] = []
    yield Subalgebra(())
    while True:
        n = len(prof)
        if prof == list(range(n, 0, -1)):
            prof = prof + [1]
        else:
            i = max(k for k in range(n) if prof[k] < n - k)
            prof = prof[:i] + [prof[i] + 1] + prof[i + 1:]
        yield Subalgebra(tuple(prof))
        if len(prof) > 8:
            return


def optimal_subalgebra(s: int, t: int) -> Subalgebra:
    """The largest B in the sequence with Ext_B^{s,t} known to vanish (t already shifted by the module's top)."""
    best = F2
    for b in subalgebra_sequence():
        if t >= ((1 << len(b.profile)) - 1) * (s + 1) + b.top_degree:
            best = b
        else:
            break
    return best
