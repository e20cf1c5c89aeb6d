"""Stunted real projective spaces H^*(RP_min^max) = span{x^k : min <= k <= max} (REFERENCE-MODULES 2).

The action comes from the coaction x -> sum x^(2^i) (x) xi_i raised to the k-th power: P(R) x^k is
x^(k+|R|) times the multinomial coefficient (k; k - |R|, r1, r2, ...) mod 2, which is 1 exactly when the
entries have disjoint binary digits. Negative k use the binomial identity binom(k, i) = binom(-k+i-1, i),
which turns the list into (-k-1, r1, r2, ...). `max` absent means infinite: nothing is ever truncated,
each degree is one cell or none, and tables are computed only for the degrees a run asks for.
"""
from __future__ import annotations

import numpy as np

from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import FIELD_MASK, FIELD_SHIFT, MAX_LEN
from algebra.milnor.profile import Profile
from algebra.module.interface import LazyTables
from algebra.module.spec import ModuleError, ModuleSpec

RP_TYPE = "real projective space"
#: clear_bottom removes these cells above the (raised) bottom: the A(2)-submodule the cells below generate.
CLEARED_ABOVE_BOTTOM = (1, 2, 3, 5, 9)


def rp_coefficient(k: int, r: tuple[int, ...]) -> int:
    """The coefficient of x^(k+|R|) in P(R) x^k."""
    total = sum(r)
    first = k - total if k >= 0 else -k - 1
    if first < 0 or (k == 0 and total):
        return 0
    seen = first
    for ri in r:
        if seen & ri:
            return 0
        seen |= ri
    return 1


class RealProjectiveSpace:
    def __init__(self, name: str, profile: Profile, bottom: int, top: int | None, shift: int,
                 cleared: frozenset[int], source: str) -> None:
        self.name = name
        self.profile = profile
        self.algebra = MilnorBasis(profile)
        self.source = source
        self.bottom, self.top, self.shift, self.cleared = bottom, top, shift, cleared
        self.action_table = LazyTables(self._table, self.dimension)

    @property
    def min_degree(self) -> int:
        return self.bottom + self.shift

    @property
    def max_degree(self) -> int | None:
        return None if self.top is None else self.top + self.shift

    def _has_cell(self, k: int) -> bool:
        return k >= self.bottom and (self.top is None or k <= self.top) and k not in self.cleared

    def dimension(self, d: int) -> int:
        return int(self._has_cell(d - self.shift))

    def basis_name(self, d: int, i: int) -> str:
        return f"x^{{{d - self.shift}}}"

    def _table(self, op_deg: int, in_deg: int) -> np.ndarray | None:
        if not (self.dimension(in_deg) and self.dimension(in_deg + op_deg)):
            return None
        return rp_coefficients(in_deg - self.shift, self.algebra.words(op_deg)).reshape(-1, 1, 1)


def rp_coefficients(k: int, words: np.ndarray) -> np.ndarray:
    """rp_coefficient(k, R) for many packed P(R) at once (uint8): the entries' binary digits are disjoint exactly
    when their sum has no carries, i.e. equals their bitwise or. An infinite RP asks for a table in every degree
    of a run, and one coefficient at a time in Python was 6% of RP_inf through stem 60."""
    r = (np.asarray(words, dtype=np.uint64)[:, None] >> FIELD_SHIFT[:MAX_LEN].astype(np.uint64)) \
        & FIELD_MASK[:MAX_LEN].astype(np.uint64)
    r = r.astype(np.int64)
    total = r.sum(axis=1)
    first = k - total if k >= 0 else np.full(len(r), -k - 1, dtype=np.int64)
    ok = (first >= 0) & ((total == 0) | (k != 0))
    digits = np.bitwise_or.reduce(r, axis=1) | np.maximum(first, 0)
    ok &= first + total == digits
    return ok.astype(np.uint8)


def rp_module(spec: ModuleSpec, profile: Profile, shift: int) -> RealProjectiveSpace:
    """A "real projective space" file: `min`, optional `max`, optional `clear_bottom`."""
    data, where = spec.data, str(spec.path)
    bottom = data.get("min")
    top = data.get("max")
    for what, value in (("min", bottom), ("max", top)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ModuleError(f"{where}: '{what}' must be an integer, got {value!r}")
    if bottom is None:
        raise ModuleError(f"{where}: a real projective space needs an integer 'min'")
    if top is not None and top < bottom:
        raise ModuleError(f"{where}: max {top} is below min {bottom}; the module would be empty")
    clear = data.get("clear_bottom", False)
    if not isinstance(clear, bool):
        raise ModuleError(f"{where}: 'clear_bottom' must be true or false, got {clear!r}")
    cleared: frozenset[int] = frozenset()
    if clear:
        bottom += (-(bottom + 1)) % 8
        cleared = frozenset(bottom + c for c in CLEARED_ABOVE_BOTTOM)
        if top is not None and top < bottom:
            raise ModuleError(f"{where}: clear_bottom raises min to {bottom}, above max {top}")
    return RealProjectiveSpace(spec.display, profile, bottom, top, shift, cleared, where)
