"""Finite sub-Hopf algebras B of the mod-p Steenrod algebra (p odd), signatures, and the vanishing line Nassau's
algorithm uses there (docs/nassau-odd.md writes the method down).

B is given by a set K of the Q_k it holds and exponents (h_1, h_2, ...): B = span{Q(E) P(R) : E in K, r_i < p^h_i}.
Dually B_* = A_* / (tau_k for k not in K, xi_i^{p^h_i}), a quotient Hopf algebra exactly when
  for k not in K and i < k in K: h_{k-i} <= i, and for 0 < i < k: h_{k-i} <= i + h_k or h_i <= h_k
(the coproducts of tau_k and xi_k^{p^h_k} fall in the ideal; tests/test_odd_subalgebra.py checks every candidate).

The signature of Q(E) P(R) is (E & K, r_i mod p^h_i): its "B-part", which at p = 2 is r_i mod 2^h_i with the
low bit of r_i in the role of Q_{i-1}. Signatures are ordered as that correspondence orders them at p = 2
(Nassau's Lemma 2.4): digits e_0, r_1, e_1, r_2, ... least significant first. In that order the terms of
Q(E) P(R) * (anything) never have a lower signature than Q(E) P(R) (the same test checks every product through degree
24 to 40, for three B at p = 3 and 5), so the signature classes filter the resolution by subcomplexes.

Vanishing line: Ext_B^{s,t}(F_p) = 0 for t > c(B) s, where c(B) is the largest t / s of the generators of the May
spectral sequence's E_1 term E[h_ij] (x) P[b_ij] (x) P[a_k] (May 1966; Ravenel, Green Book 3.2.5): a_k at
(1, 2p^k - 1) for k in K, h_ij at (1, 2(p^i - 1)p^j) and b_ij at (2, 2(p^i - 1)p^{j+1}) for j < h_i. Ext is a
subquotient of E_1 in each bidegree, so the line is proved, not measured.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Iterator

import numpy as np

from algebra.milnor.odd_basis import layout
from algebra.milnor.odd_kernels import signature_filter
from algebra.milnor.profile import UNBOUNDED, Profile
from algebra.milnor.subalgebra import subalgebra_sequence

#: The longest candidate profile tried (B beyond it has a top class far past any degree computed).
MAX_CANDIDATES = 16


@dataclass(frozen=True)
class OddSubalgebra:
    p: int
    q_set: int = 0
    p_part: tuple[int, ...] = ()

    @property
    def q_indices(self) -> list[int]:
        return [k for k in range(self.q_set.bit_length()) if self.q_set >> k & 1]

    def signature_classes(self, words: np.ndarray) -> np.ndarray:
        """Signature (packed like a basis word) of each packed Q(E) P(R)."""
        lay = layout(self.p)
        words = np.asarray(words, dtype=np.uint64)
        out = words & np.uint64(self.q_set)
        for i, h in enumerate(self.p_part):
            if h:
                shift = np.uint64(lay.shifts[i])
                r = (words >> shift) & np.uint64(lay.masks[i])
                out |= (r % np.uint64(self.p**h)) << shift
        return out

    def signature_word(self, sig: tuple[int, tuple[int, ...]]) -> int:
        return layout(self.p).pack(*sig)

    def forbid(self, sig: tuple[int, tuple[int, ...]] | None) -> np.ndarray:
        """The product kernel's filter keeping only products of signature sig (None: the zero one): their Q-part
        and residues are checked before a coefficient or an index is computed (the column map alone is exact)."""
        e, r = (0, ()) if sig is None else sig
        wants = [r[i] if i < len(r) else 0 for i in range(len(self.p_part))]
        return signature_filter(len(layout(self.p).shifts), self.q_set, e, tuple(self.p**h for h in self.p_part),
                                tuple(wants))

    def signatures(self, max_degree: int) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Nonzero signatures (E, R) of degree <= max_degree, e_0, r_1, e_1, r_2, ... fastest first."""
        lay = layout(self.p)
        digits = []  # (radix, degree of one unit, is Q, index)
        for i in range(max(len(self.p_part), self.q_set.bit_length())):
            if self.q_set >> i & 1:
                digits.append((2, lay.tau[i], True, i))
            h = self.p_part[i] if i < len(self.p_part) else 0
            if h:
                digits.append((self.p**h, lay.xi[i], False, i))
        value = [0] * len(digits)
        while True:
            k = 0
            while k < len(digits):
                value[k] += 1
                if value[k] < digits[k][0]:
                    break
                value[k] = 0
                k += 1
            if k == len(digits):
                return
            if sum(v * d[1] for v, d in zip(value, digits)) <= max_degree:
                e = sum(1 << d[3] for v, d in zip(value, digits) if d[2] and v)
                r = [0] * len(self.p_part)
                for v, d in zip(value, digits):
                    if not d[2]:
                        r[d[3]] = v
                while r and r[-1] == 0:
                    r.pop()
                yield e, tuple(r)

    @cached_property  # read at every step (vanishes), for one of a handful of candidates
    def top_degree(self) -> int:
        lay = layout(self.p)
        return sum(lay.tau[k] for k in self.q_indices) + sum(
            (self.p**h - 1) * lay.xi[i] for i, h in enumerate(self.p_part))

    @cached_property
    def slope(self) -> int:
        """c(B): Ext_B^{s,t}(F_p) = 0 for t > c(B) s (the May E_1 generators' largest t / s; 0 for F_p)."""
        p = self.p
        ratios = [2 * p**k - 1 for k in self.q_indices]
        ratios += [(p ** (i + 1) - 1) * p ** (j + 1) for i, h in enumerate(self.p_part) for j in range(h)]
        return max(ratios, default=0)

    def vanishes(self, s: int, t: int) -> bool:
        """Whether Nassau's step may use B at (s, t) (t already less the module's top cell): every signature class
        there is exact, i.e. Ext_B vanishes at (s, t - top_degree(B)) and so at (s - 1, .) and (s - 2, .) too."""
        return t - self.top_degree > self.slope * s

    def intersect(self, profile: Profile) -> OddSubalgebra:
        """B intersected with the algebra a module lives over (an untruncated profile: itself a sub-Hopf algebra)."""
        q = self.q_set if profile.q_part < 0 else self.q_set & profile.q_part
        h = [min(x, profile.h(i)) if profile.h(i) < UNBOUNDED else x for i, x in enumerate(self.p_part)]
        while h and h[-1] == 0:
            h.pop()
        return OddSubalgebra(self.p, q, tuple(h))

    def describe(self) -> str:
        if not self.q_set and not self.p_part:
            return f"F{self.p}"
        qs = ",".join(str(k) for k in self.q_indices)
        return f"E(Q_{qs}) P{list(self.p_part)}" if self.p_part else f"E(Q_{qs})"


@lru_cache(maxsize=None)
def candidates(p: int, profile: Profile) -> tuple[OddSubalgebra, ...]:
    """Increasing sub-Hopf algebras of the module's algebra, each one piece more than the last: the p = 2 sequence
    F2, [1], [1,1], [2,1], [2,1,1], ... read through Q_{i-1} <-> the low bit of r_i, so F_p, E(Q_0), E(Q_0, Q_1),
    A(1) = E(Q_0, Q_1) P[1], ..., A(n) = E(Q_0..Q_n) P[n, .., 1], each intersected with the module's algebra."""
    lay = layout(p)
    out: list[OddSubalgebra] = []
    for at_two in subalgebra_sequence():
        prof = at_two.profile
        if len(prof) > min(len(lay.xi), lay.q_bits) or len(out) > MAX_CANDIDATES:
            break
        h = [max(x - 1, 0) for x in prof]
        while h and h[-1] == 0:
            h.pop()
        b = OddSubalgebra(p, sum(1 << i for i, x in enumerate(prof) if x >= 1), tuple(h)).intersect(profile)
        if not out or b != out[-1]:
            out.append(b)
    return tuple(out)


@lru_cache(maxsize=1 << 16)
def optimal_odd_subalgebra(p: int, profile: Profile, s: int, t: int) -> OddSubalgebra:
    """The largest candidate whose vanishing line holds at (s, t) (t already less the module's top cell); kept, since
    every step asks twice (nassau_step.standard_at) and a lift asks again."""
    best = OddSubalgebra(p)
    for b in candidates(p, profile):
        if not b.vanishes(s, t):
            break
        best = b
    return best
