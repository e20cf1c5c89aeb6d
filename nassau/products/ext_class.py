"""An element of Ext as users write it, `n,s,[v]` (v in the Ext basis x_(n,s,0), x_(n,s,1), ...; entries 0..p-1),
and its checks."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from nassau.engine.resolution import Resolution

#: Classes of Ext(S) known by name, in bidegrees (n, s) where Ext is one-dimensional (so the name is the class);
#: h_i = x_(2^i - 1, 1, 0) is known for every i.
SPHERE_CLASSES = {"c0": (8, 3), "Ph1": (9, 5), "Ph2": (11, 5), "d0": (14, 4), "e0": (17, 4), "c1": (19, 3),
                  "g": (20, 4)}
_H = re.compile(r"^h(\d+)$")
_CLASS = re.compile(r"^\s*(-?\d+)\s*,\s*(\d+)\s*,\s*\[\s*(\d+(?:\s*,\s*\d+)*)?\s*\]\s*$")
_NAMED = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_^]*)\s*=(.*)$")


class ClassError(ValueError):
    """A class that is malformed or does not fit the computed range; the message says which and why."""


@dataclass(frozen=True)
class ExtClass:
    n: int
    s: int
    vector: tuple[int, ...]

    @property
    def t(self) -> int:
        return self.n + self.s

    @property
    def array(self) -> np.ndarray:
        return np.array(self.vector, dtype=np.uint8)

    @property
    def h_index(self) -> int | None:
        """i when this is h_i, the only class at (2^i - 1, 1) at p = 2, else None."""
        if self.s == 1 and self.vector == (1,) and self.n >= 0 and (self.n + 1) & self.n == 0:
            return (self.n + 1).bit_length() - 1
        return None

    def check_entries(self, p: int, what: str) -> None:
        """Refuse an entry that is not below p (known before anything is resolved)."""
        if any(v >= p for v in self.vector):
            raise ClassError(f"{what} ({self}) has an entry that is not below p = {p}")

    def __str__(self) -> str:
        return f"{self.n},{self.s},[{','.join(map(str, self.vector))}]"

    def check_in(self, res: Resolution, what: str) -> None:
        """Refuse a class outside what `res` computed, or whose vector does not have that bidegree's length."""
        if not res.is_done(self.s, self.t):
            raise ClassError(f"{what} ({self}) lies outside the computed range of {res.module.name}")
        dim = res.new_gens[(self.s, self.t)]
        if len(self.vector) != dim:
            raise ClassError(f"{what} ({self}) needs a vector of length {dim} = dim Ext at (n={self.n}, s={self.s}), "
                             f"got {len(self.vector)}")
        self.check_entries(res.field.p, what)
        if self.s == 0 and self.n < res.min_degree:
            raise ClassError(f"{what} ({self}) lies below {res.module.name}'s bottom degree")


def parse_class(text: str) -> ExtClass:
    """`n,s,[v]` -> ExtClass (v a comma-separated list of entries 0..p-1, possibly empty; check_in checks them
    against p)."""
    m = _CLASS.match(text)
    if not m:
        raise ClassError(f"cannot read the class {text!r}: expected n,s,[v] such as 20,4,[1]")
    vec = tuple(int(x) for x in m.group(3).split(",")) if m.group(3) else ()
    return ExtClass(int(m.group(1)), int(m.group(2)), vec)


def parse_named_class(text: str) -> tuple[str, ExtClass]:
    """`NAME=n,s,[v]` -> (NAME, class)."""
    m = _NAMED.match(text)
    if not m:
        raise ClassError(f"cannot read {text!r}: expected NAME=n,s,[v] such as g=20,4,[1]")
    return m.group(1), parse_class(m.group(2))


def sphere_class(name: str, unit: Resolution) -> ExtClass:
    """The class of Ext(S) a name stands for (h_i, c0, Ph1, d0, g, ...), checked against the unit's resolution."""
    m = _H.match(name)
    if m:
        n, s = (1 << int(m.group(1))) - 1, 1
    elif name in SPHERE_CLASSES:
        n, s = SPHERE_CLASSES[name]
    else:
        known = ", ".join(["h0, h1, ...", *SPHERE_CLASSES])
        raise ClassError(f"unknown class {name!r}: name one of {known}, or give it as {name}=n,s,[v]")
    if not unit.is_done(s, n + s):
        raise ClassError(f"the class {name} at (n={n}, s={s}) lies outside the computed range")
    if unit.new_gens[(s, n + s)] != 1:
        raise ClassError(f"Ext(S) at (n={n}, s={s}) is not one-dimensional; give {name} as {name}=n,s,[v]")
    return ExtClass(n, s, (1,))


def parse_operation(text: str) -> tuple[str, ExtClass | None]:
    """A chart operation: a known name (the class is looked up later) or NAME=n,s,[v]."""
    if "=" in text:
        return parse_named_class(text)
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_^]*$", text):
        raise ClassError(f"cannot read the operation {text!r}: expected a name such as h2 or c0, or NAME=n,s,[v]")
    return text, None


def known_bidegree(name: str) -> tuple[int, int] | None:
    """Where a named sphere class lies, without a resolution (None for unknown names)."""
    m = _H.match(name)
    if m:
        return (1 << int(m.group(1))) - 1, 1
    return SPHERE_CLASSES.get(name)
