"""Which bidegrees a run computes: through a stem (n <= N, s <= S) or a rectangle (t <= T, s <= S); and how the
engine names a bidegree, (s, t)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from charts.model import BidegreeNS
from nassau.engine.errors import RegionError

BidegreeST = tuple[int, int]
"""(s, t): filtration and internal degree, how the engine, its jobs and the save directory name a bidegree (charts
and classes name it (n, s): charts.model.BidegreeNS)."""

#: Largest internal degree the packed Milnor basis supports.
MAX_T = 2045
#: Largest stem or filtration the CLI accepts (a run there would take years; beyond it is a typo).
MAX_STEM = 1000
MAX_S = 500


@dataclass(frozen=True)
class Region:
    max_s: int
    min_degree: int
    max_stem: int | None = None
    max_t: int | None = None

    def __post_init__(self) -> None:
        if (self.max_stem is None) == (self.max_t is None):
            raise RegionError("give exactly one of a maximal stem or a maximal t")
        if not 0 <= self.max_s <= MAX_S:
            raise RegionError(f"max s {self.max_s} is out of range (0..{MAX_S})")
        top = self.max_stem if self.max_stem is not None else self.max_t
        what = "stem" if self.max_stem is not None else "t"
        if top < self.min_degree:
            raise RegionError(f"{what} {top} is below the module's bottom degree {self.min_degree}")
        if top > MAX_STEM:
            raise RegionError(f"{what} {top} is out of range (at most {MAX_STEM})")
        if self.t_limit > MAX_T + self.min_degree:
            raise RegionError(f"this region reaches internal degree {self.t_limit}, beyond the supported {MAX_T}")

    @classmethod
    def through(cls, points: Iterable[BidegreeNS], min_degree: int) -> Region:
        """The smallest stem-shaped region holding every (n, s) given (nothing given: the bottom cell only): what
        lifting into those bidegrees needs."""
        points = list(points)
        return cls(max_s=max([0, *(s for _, s in points)]), min_degree=min_degree,
                   max_stem=max([min_degree, *(n for n, _ in points)]))

    def union(self, other: Region) -> Region:
        """The smallest stem-shaped region holding both (of the same module)."""
        return Region(max_s=max(self.max_s, other.max_s), min_degree=self.min_degree,
                      max_stem=max(self.chart_max_stem, other.chart_max_stem))

    def describe(self) -> str:
        """`stem 40, s <= 15` or `t = 30, s <= 15`: the region as summaries name it."""
        edge = f"stem {self.max_stem}" if self.max_stem is not None else f"t = {self.max_t}"
        return f"{edge}, s <= {self.max_s}"

    @property
    def t_limit(self) -> int:
        """The largest t of any bidegree in the region."""
        return self.max_t if self.max_t is not None else self.max_stem + self.max_s

    def row_end(self, s: int) -> int:
        """Largest t computed in row s."""
        return self.max_stem + s if self.max_stem is not None else self.max_t

    def contains(self, s: int, t: int) -> bool:
        return 0 <= s <= self.max_s and self.min_degree + s <= t <= self.row_end(s)

    def bidegrees(self) -> list[tuple[int, int]]:
        """Every (s, t) of the region: row s starts at the module's bottom degree plus s."""
        return [(s, t) for s in range(self.max_s + 1) for t in range(self.min_degree + s, self.row_end(s) + 1)]

    def chart_rows(self) -> dict[int, int]:
        """s -> largest stem drawn in row s."""
        return {s: self.row_end(s) - s for s in range(self.max_s + 1)}

    @property
    def chart_max_stem(self) -> int:
        return max(self.chart_rows().values())
