"""Where things go on a drawn chart: the reference's grid (REFERENCE 6.4), shared by the SVG writer and reader.

Stem n is drawn at x = MARGIN + (n - min_n) * GRID and filtration s at y = MARGIN + (max_s - s) * GRID, so with
min_n = 0 every coordinate equals sseq's. The k generators of a bidegree sit at fixed offsets around that point.
"""
from __future__ import annotations

from dataclasses import dataclass

GRID = 20
MARGIN = 30

Offsets = tuple[tuple[float, float], ...]

# (radius, offsets) for a bidegree with 1..12 generators: the layout the reference draws (public geometry of
# sseq's charting PATTERNS), so that our charts and its charts put every dot in the same place.
DOT_PATTERNS: tuple[tuple[float, Offsets], ...] = (
    (2.0, ((0, 0),)),
    (2.0, ((-3, 0), (3, 0))),
    (2.0, ((-3, 2.58), (3, 2.58), (0, -2.58))),
    (2.0, ((-3, 3), (3, 3), (-3, -3), (3, -3))),
    (1.5, ((-3, 3), (3, 3), (0, 0), (-3, -3), (3, -3))),
    (1.5, ((-2, 4), (2, 4), (-2, 0), (2, 0), (-2, -4), (2, -4))),
    (1.5, ((-2, 4), (2, 4), (-4, 0), (0, 0), (4, 0), (-2, -4), (2, -4))),
    (1.5, ((-4, 4), (0, 4), (4, 4), (-4, 0), (0, 0), (4, 0), (-2, -4), (2, -4))),
    (1.5, ((-4, 4), (0, 4), (4, 4), (-4, 0), (0, 0), (4, 0), (-4, -4), (0, -4), (4, -4))),
    (1.5, ((-4, 4), (0, 4), (4, 4), (-4, 0), (-1.3, 0), (1.3, 0), (4, 0), (-4, -4), (0, -4), (4, -4))),
    (1.5, ((-4, 4), (-1.3, 4), (1.3, 4), (4, 4), (-4, 0), (-1.3, 0), (1.3, 0), (4, 0),
           (-4, -4), (0, -4), (4, -4))),
    (1.5, ((-4, 4), (-1.3, 4), (1.3, 4), (4, 4), (-4, 0), (-1.3, 0), (1.3, 0), (4, 0),
           (-4, -4), (-1.3, -4), (1.3, -4), (4, -4))),
)
MAX_PATTERN = len(DOT_PATTERNS)
"""Above this many generators a bidegree is one dot with its count written beside it."""
CROWD_RADIUS = 2.0


@dataclass(frozen=True)
class Frame:
    """The drawn region: stems min_n..max_n, filtrations 0..max_s, and the pixel coordinates inside it."""

    min_n: int
    max_n: int
    max_s: int

    @property
    def width(self) -> int:
        return (self.max_n - self.min_n) * GRID + 2 * MARGIN

    @property
    def height(self) -> int:
        return self.max_s * GRID + 2 * MARGIN

    def x(self, n: float) -> float:
        return MARGIN + (n - self.min_n) * GRID

    def y(self, s: float) -> float:
        return MARGIN + (self.max_s - s) * GRID

    def dots(self, n: int, s: int, count: int) -> tuple[float, list[tuple[float, float]]]:
        """(radius, centre of each generator) for a bidegree with `count` generators.

        A crowded bidegree (more than MAX_PATTERN) has a single dot, and every generator is drawn at its centre.
        """
        x, y = self.x(n), self.y(s)
        if count > MAX_PATTERN:
            return CROWD_RADIUS, [(x, y)] * count
        radius, offsets = DOT_PATTERNS[count - 1]
        return radius, [(x + dx, y + dy) for dx, dy in offsets]


def fmt(v: float) -> str:
    """A coordinate as SVG text: at most two decimals, no trailing zeros ("30", "172.58", "48.7")."""
    return f"{v:.2f}".rstrip("0").rstrip(".")
