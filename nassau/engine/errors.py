"""What the engine raises for a computation that cannot run as asked: the CLI prints it as one line."""
from __future__ import annotations


class EngineError(ValueError):
    """The requested computation cannot run as asked (e.g. an algorithm the module does not allow)."""


class RegionError(EngineError):
    """A region that cannot be computed (an edge below the module's bottom, or out of range)."""
