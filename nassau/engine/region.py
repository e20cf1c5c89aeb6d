"""Which bidegrees a run computes: through a stem (n <= N, s <= S) or a rectangle (t <= T, s <= S)."""
from __future__ import annotations

from dataclasses import dataclass

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
            raise ValueError("give exactly one of a maximal stem or a maximal t")
        if not 0 <= self.max_s <= MAX_S:
            raise ValueError(f"max s {self.max_s} is out of range (0..{MAX_S})")
        top = self.max_stem if self.max_stem is not None else self.max_t
        what = "stem" if self.max_stem is not None else "t"
        if top < self.min_degree:
            raise ValueError(f"{what} {top} is below the module's bottom degree {self.min_degree}")
        if top > MAX_STEM:
            raise ValueError(f"{what} {top} is out of range (at most {MAX_STEM})")
        if self.t_limit > MAX_T + self.min_degree:
            raise ValueError(f"this region reaches internal degree {self.t_limit}, beyond the supported {MAX_T}")

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
