"""The Milnor basis Q(E) P(R) of the mod-p Steenrod algebra, p odd, in the reference's order (a wire format).

|Q_k| = 2p^k - 1 and |xi_i| = 2(p^i - 1). In each degree the basis is sorted by the Q-bitmask E (as an integer),
then by the P-part in the order of REFERENCE-ODD-PRIMES 1.3: by length, and within a length by the order of
R - e_last one xi-degree down (the p = 2 rule with p-adic xi degrees). An element is packed into one uint64:
the low bits hold E, then one bit field per r_i wide enough for every degree up to MAX_DEGREE, so compiled
kernels unpack, compare and look up elements with shifts and a binary search over each degree's sorted words.
Elements are written (E, R) in Python: E an int bitmask, R a tuple with trailing zeros stripped.
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache

import numpy as np

from algebra.milnor.graded_basis import GradedBasis
from algebra.milnor.ppart import MAX_DEGREE
from algebra.milnor.profile import Profile

Element = tuple[int, tuple[int, ...]]


class OddLayout:
    """Degrees and the packed-word bit fields at one odd prime."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.q = 2 * (p - 1)
        self.tau = [2 * p**k - 1 for k in range(12) if 2 * p**k - 1 <= MAX_DEGREE]
        self.xi = [2 * (p**i - 1) for i in range(1, 12) if 2 * (p**i - 1) <= MAX_DEGREE]
        self.q_bits = len(self.tau)
        #: The same degrees as arrays, for compiled kernels.
        self.tau_degrees = np.array(self.tau, dtype=np.int64)
        self.xi_degrees = np.array(self.xi, dtype=np.int64)
        widths = [int(MAX_DEGREE // x).bit_length() for x in self.xi]
        self.shifts = np.concatenate([[self.q_bits], self.q_bits + np.cumsum(widths)[:-1]]).astype(np.int64)
        self.masks = np.array([(1 << w) - 1 for w in widths], dtype=np.int64)
        if self.q_bits + sum(widths) > 64:
            raise ValueError(f"p = {p}: the packed Milnor layout needs more than 64 bits")

    def pack(self, e: int, r: tuple[int, ...]) -> int:
        if len(r) > len(self.xi) or e >> self.q_bits:
            raise ValueError(f"element {format_odd((e, r))} is beyond degree {MAX_DEGREE}")
        word = e
        for i, ri in enumerate(r):
            word |= int(ri) << int(self.shifts[i])
        return word

    def unpack(self, word: int) -> Element:
        word = int(word)
        r = [(word >> int(self.shifts[i])) & int(self.masks[i]) for i in range(len(self.xi))]
        while r and r[-1] == 0:
            r.pop()
        return word & ((1 << self.q_bits) - 1), tuple(r)

    def degree(self, elem: Element) -> int:
        e, r = elem
        return sum(self.tau[k] for k in range(self.q_bits) if e >> k & 1) + sum(
            ri * self.xi[i] for i, ri in enumerate(r))


@lru_cache(maxsize=None)
def layout(p: int) -> OddLayout:
    return OddLayout(p)


class OddMilnorBasis(GradedBasis):
    """Basis tables of A_p or a profile subalgebra, grown on demand up to a degree (thread-safe)."""

    def __init__(self, p: int, profile: Profile) -> None:
        self.prime = p
        self.profile = profile
        self.layout = layout(p)
        self._lock = threading.Lock()
        self.max_degree = -1
        self._words: list[np.ndarray] = []
        self._ppart_words: list[list[int]] = []  # P-parts of q-degree k, as packed words without E bits
        self._dims = np.zeros(0, dtype=np.int64)
        self.flat = np.zeros(0, dtype=np.uint64)
        self.flat_offset = np.zeros(1, dtype=np.int64)
        #: For compiled lookups: each degree's words sorted, and the basis index of each sorted word.
        self.sorted_words = np.zeros(0, dtype=np.uint64)
        self.sorted_index = np.zeros(0, dtype=np.int64)
        self.extend(0)

    # -- membership ---------------------------------------------------------------------------------
    def _cap(self, i: int) -> int:
        """Largest r_{i+1} allowed by the profile."""
        h = self.profile.h(i)
        return (1 << 62) if h >= 64 else self.prime**h - 1

    def _has_q(self, k: int) -> bool:
        return self.profile.q_part < 0 or bool(self.profile.q_part >> k & 1)

    # -- tables -------------------------------------------------------------------------------------
    def _generate(self, words: list[np.ndarray], d: int) -> np.ndarray:
        lay = self.layout
        while len(self._ppart_words) <= d // lay.q:
            self._ppart_words.append(self._ppart_list(len(self._ppart_words)))
        out = []
        for e in range(1 << lay.q_bits):
            qdeg = lay.degree((e, ()))
            if qdeg > d:
                break
            if (d - qdeg) % lay.q or not all(self._has_q(k) for k in range(lay.q_bits) if e >> k & 1):
                continue
            out.extend(e | w for w in self._ppart_words[(d - qdeg) // lay.q])
        return np.array(out, dtype=np.uint64)

    def _tables(self, max_degree: int) -> None:
        order = [np.argsort(w, kind="stable") for w in self._words]
        self.sorted_words = np.concatenate([w[o] for w, o in zip(self._words, order, strict=True)])
        self.sorted_index = np.concatenate(order).astype(np.int64)

    def _ppart_list(self, k: int) -> list[int]:
        """T(k): the P-parts of degree q k, in order, as packed words (REFERENCE-ODD-PRIMES 1.3 step 1)."""
        lay = self.layout
        if k == 0:
            return [0]
        out = []
        for i in range(1, len(lay.xi) + 1):
            units = (self.prime**i - 1) // (self.prime - 1)
            if units > k:
                break
            cap = self._cap(i - 1)
            if cap == 0:
                continue
            for w in self._ppart_words[k - units]:
                length = len(lay.unpack(w)[1])
                if length > i:
                    break
                if length == i and (w >> int(lay.shifts[i - 1])) & int(lay.masks[i - 1]) >= cap:
                    continue
                out.append(w + (1 << int(lay.shifts[i - 1])))
        return out

    # -- queries ------------------------------------------------------------------------------------
    def element(self, d: int, index: int) -> Element:
        return self.layout.unpack(int(self.words(d)[index]))

    def degree(self, elem: Element) -> int:
        return self.layout.degree(elem)

    def unpack(self, word: int) -> Element:
        """The element a packed word stands for."""
        return self.layout.unpack(word)

    def contains(self, elem: Element) -> bool:
        e, r = elem
        return all(self._has_q(k) for k in range(self.layout.q_bits) if e >> k & 1) and all(
            ri <= self._cap(i) for i, ri in enumerate(r))

    def index(self, elem: Element) -> int:
        """Position of Q(E) P(R) in its degree (ValueError if it is not in this algebra)."""
        d = self.degree(elem)
        if not self.contains(elem):
            raise ValueError(f"{format_odd(elem)} is not in {self.profile.describe()}")
        word = self.layout.pack(*elem)
        hits = np.nonzero(self.words(d) == np.uint64(word))[0]
        return int(hits[0])

    def generators(self, e: int) -> list[Element]:
        """Algebra generators of degree e: beta = Q_0 and P(p^k) for A; Q_k and P(0, .., p^k) for profiles."""
        lay, p = self.layout, self.prime
        out: list[Element] = []
        if self.profile.is_full:
            if e == 1:
                out.append((1, ()))
            elif e % lay.q == 0 and _is_power(e // lay.q, p):
                out.append((0, (e // lay.q,)))
            return out
        for k, tau in enumerate(lay.tau):
            if tau == e and self._has_q(k):
                out.append((1 << k, ()))
        for j, x in enumerate(lay.xi):
            if e % x == 0 and _is_power(e // x, p) and e // x <= self._cap(j):
                out.append((0, tuple([0] * j + [e // x])))
        return out

    def format(self, elem: Element) -> str:
        return format_odd(elem)

    def parse(self, text: str) -> Element:
        return parse_odd(text)


def _is_power(n: int, p: int) -> bool:
    while n > 1 and n % p == 0:
        n //= p
    return n == 1


def format_odd(elem: Element) -> str:
    """`1`, `Q_0 Q_1 P(1, 2)`, `Q_2`, `P(4)`: the reference's display of a Milnor basis element."""
    e, r = elem
    parts = [f"Q_{k}" for k in range(e.bit_length()) if e >> k & 1]
    if r:
        parts.append("P(" + ", ".join(str(x) for x in r) + ")")
    return " ".join(parts) if parts else "1"


_Q = re.compile(r"^Q_\s*(\d+)$")
_PN = re.compile(r"^(?:P|Sq)\s*(\d+)$")
_PR = re.compile(r"^P\(\s*(\d+(?:\s*,\s*\d+)*)?\s*\)$")


def parse_odd(text: str) -> Element:
    """`1`, `b` (Q_0), `P<n>` / `Sq<n>` (P(n)), `Q_<i> ... P(r1, ...)` (each part optional)."""
    s = text.strip()
    if s == "1":
        return 0, ()
    if s == "b":
        return 1, ()
    m = _PN.match(s)
    if m:
        n = int(m.group(1))
        return 0, ((n,) if n else ())
    e, r = 0, ()
    tokens = re.findall(r"Q_\s*\d+|P\([^)]*\)|\S+", s)
    for k, token in enumerate(tokens):
        mq, mp = _Q.match(token), _PR.match(token)
        if mq:
            e |= 1 << int(mq.group(1))
        elif mp and k == len(tokens) - 1:
            r = tuple(int(x) for x in mp.group(1).split(",")) if mp.group(1) else ()
        else:
            raise ValueError(f"cannot parse Steenrod algebra element {text!r} (expected 1, b, P<n>, "
                             "Q_i ... P(r1, ...))")
    r = list(r)
    while r and r[-1] == 0:
        r.pop()
    return e, tuple(r)
