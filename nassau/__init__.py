"""Minimal resolutions over the mod-p Steenrod algebra: the engine, scheduler, save store, CLI and Python API.

`nassau.resolve(...)` and `nassau.load(...)` (nassau.api.request) are imported on first use, so `import nassau` stays cheap.
"""

__version__ = "0.1.0"
__all__ = ["resolve", "load", "Ext"]


def __getattr__(name: str):
    if name in __all__:
        from nassau.api import request as api

        return getattr(api, name)
    raise AttributeError(f"module 'nassau' has no attribute {name!r}")
