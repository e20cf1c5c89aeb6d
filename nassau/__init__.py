"""Minimal resolutions over the mod-2 Steenrod algebra: the engine, scheduler, save store and CLI."""

__version__ = "0.1.0"
