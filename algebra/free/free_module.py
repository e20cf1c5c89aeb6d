"""Free modules over A with a generator-major, append-only basis (REFERENCE 2.3).

In degree t the basis is one block per generator g (in the order generators were added, which is by
degree), each block the algebra basis in degree t - deg g. Adding generators appends blocks, so an
index never moves: work on lower generators stays valid while new ones arrive, and restricting to the
generators of degree < d is a prefix of the basis.
"""
from __future__ import annotations

import threading
from bisect import bisect_left

import numpy as np

from algebra.milnor.basis import MilnorBasis
from fp import field

#: Block starts kept per free module, the oldest dropped first. A resolution asks for them again only within a
#: bidegree or two (S_3 through stem 200, s <= 50: no more misses with 16 kept than with all, 13332 of 52006 calls),
#: while keeping every one held 6 MiB there, of a peak resident size near 200 MiB.
CACHED_STARTS = 64
#: basis_words of the last degree asked is kept, per free module, when it has at most this many elements: a Nassau
#: step reads the same degree of a module up to four times (its zero-signature rows, a correction's, the generators
#: it adds), and in small degrees finding the words again is most of their cost (S_5 through stem 400: 16595 of
#: 27018 calls find them kept). Large degrees are not kept: their matrices cost far more than their words.
WORDS_KEPT_UP_TO = 4096


class FreeModule:
    def __init__(self, algebra: MilnorBasis, name: str = "F") -> None:
        self.algebra = algebra
        self.name = name
        self._lock = threading.Lock()
        self._degrees = np.zeros(0, dtype=np.int64)
        self._degree_list: list[int] = []  # the same degrees for bisect: a tenth of searchsorted's cost
        self.gen_names: list[str] = []
        # (t, ngens) -> offsets, the last CACHED_STARTS asked; valid forever, since generators are only appended.
        self._offsets: dict[tuple[int, int], np.ndarray] = {}
        #: ((t, ngens), basis_words there) for the last small degree asked (WORDS_KEPT_UP_TO), or None.
        self._last_words: tuple[tuple[int, int], tuple[np.ndarray, np.ndarray]] | None = None

    @property
    def gen_degrees(self) -> np.ndarray:
        return self._degrees

    @property
    def num_gens(self) -> int:
        return len(self._degrees)

    def gens_below(self, degree: int) -> int:
        """How many generators have degree < `degree` (a prefix, since degrees never decrease)."""
        return bisect_left(self._degree_list, degree)

    def add_generators(self, degree: int, names: list[str]) -> int:
        """Append generators of one degree; returns the index of the first. Degrees must not decrease."""
        with self._lock:
            if len(self._degrees) and degree < self._degrees[-1]:
                raise ValueError(f"{self.name}: generators must be added in nondecreasing degree")
            first = len(self._degrees)
            self._degrees = np.concatenate([self._degrees, np.full(len(names), degree, dtype=np.int64)])
            self._degree_list.extend([int(degree)] * len(names))
            self.gen_names.extend(names)
            return first

    def offsets(self, t: int, ngens: int | None = None) -> np.ndarray:
        """Start of each generator's block in degree t for the first ngens generators, plus the total."""
        return self.block_starts(self._offsets, t, ngens, self.algebra.block_starts)

    def block_starts(self, cache: dict, t: int, ngens: int | None, starts) -> np.ndarray:
        """Block starts (starts(t, generator degrees) -> 0 and the running block sizes) of the first ngens
        generators in degree t, cached in `cache` (the last CACHED_STARTS): valid forever, since generators are only
        ever appended. starts takes t, so callers pass a plain method and build no callback per call (asked several
        times a bidegree)."""
        count = len(self._degree_list)  # extended after _degrees: never more generators than _degrees holds
        key = (t, count if ngens is None else min(ngens, count))
        out = cache.get(key)
        if out is None:
            out = starts(t, self._degrees[:key[1]])
            with self._lock:
                cache[key] = out
                if len(cache) > CACHED_STARTS:
                    del cache[next(iter(cache))]
        return out

    def dimension(self, t: int, ngens: int | None = None) -> int:
        return int(self.offsets(t, ngens)[-1])

    def product_offsets(self, t: int, ngens: int | None = None) -> np.ndarray:
        """Where the product kernels write each generator's block: the blocks themselves (an unstable free
        module writes whole-algebra blocks and keeps a prefix of each, see unstable_free_module)."""
        return self.offsets(t, ngens)

    def excess_columns(self, t: int, ngens: int | None = None) -> np.ndarray | None:
        """A map from product_offsets' columns onto this basis, or None when they are the same (here, always)."""
        return None

    def basis_words(self, t: int, ngens: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """For each basis element in degree t: its generator and its packed p-part (read-only: the last small degree
        asked is kept, and valid forever, since generators are only appended)."""
        count = len(self._degree_list)
        key = (t, count if ngens is None else min(ngens, count))
        kept = self._last_words
        if kept is not None and kept[0] == key:
            return kept[1]
        found = self.words_of(t, key[1])
        if len(found[0]) <= WORDS_KEPT_UP_TO:
            self._last_words = (key, found)
        return found

    def words_of(self, t: int, ngens: int) -> tuple[np.ndarray, np.ndarray]:
        """basis_words found afresh (its twin, which the tests compare with it)."""
        off = self.offsets(t, ngens)
        n = int(off[-1])
        gens = np.repeat(np.arange(len(off) - 1, dtype=np.int64), np.diff(off))
        local = np.arange(n, dtype=np.int64) - off[gens]
        words = self.algebra.flat_words(t - self._degrees[gens], local)
        gens.setflags(write=False)
        words.setflags(write=False)
        return gens, words

    def words_at(self, t: int, indices: np.ndarray, ngens: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """basis_words for the given basis indices only: a sparse vector's terms without listing the whole degree."""
        off = self.offsets(t, ngens)
        gens = np.searchsorted(off, indices, side="right") - 1
        return gens, self.algebra.flat_words(t - self._degrees[gens], indices - off[gens])

    def element_string(self, t: int, vector: np.ndarray, ngens: int | None = None) -> str:
        """`P(1) x_(0,0,0) + 2 Q_1 x_(3,1,0) + ...` for a vector in degree t (packed over F2, bytes over F_p)."""
        off = self.offsets(t, ngens)
        entries = field(self.algebra.prime).to_ints(np.asarray(vector).reshape(1, -1), int(off[-1]))[0]
        terms = []
        for i in np.nonzero(entries)[0]:
            g = int(np.searchsorted(off, i, side="right") - 1)
            elem = self.algebra.element(t - int(self._degrees[g]), int(i - off[g]))
            coef = "" if entries[i] == 1 else f"{entries[i]} "
            terms.append(f"{coef}{self.algebra.format(elem)} {self.gen_names[g]}")
        return " + ".join(terms) if terms else "0"
