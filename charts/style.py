"""How a drawn chart's lines look, one choice for the SVG and the page: a colour per operation in the chart's
order (h0 black, h1 red, h2 green, h3 purple, then further colours for further products), h2 dashed as sseq draws
it, and d2 blue (the reference's colour for it)."""
from __future__ import annotations

PALETTE = ("#000000", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#6d4c41", "#ad1457")
D2_COLOUR = "#1f5fd6"
DASHED = frozenset({"h2"})
"""Operations drawn dashed."""


def op_colours(operations: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The colour of each operation's lines, by its place among the chart's operations."""
    return {op: PALETTE[k % len(PALETTE)] for k, op in enumerate(operations)}
