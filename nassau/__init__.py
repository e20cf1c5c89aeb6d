"""Minimal resolutions over the mod-p Steenrod algebra: the engine, scheduler, save store, CLI and Python API.

`nassau.resolve(...)`, `nassau.load(...)` (nassau.api.request) and `nassau.Ext` (nassau.api.ext) are imported on
first use, so `import nassau` stays cheap; that first use is an entry point, and installs fp.kernel_loading (cached
kernels load without readying numba's compiler), as the console script does.
"""

__version__ = "0.1.0"
__all__ = ["resolve", "load", "Ext"]


def __getattr__(name: str):
    if name in __all__:
        from fp import kernel_loading

        kernel_loading.install()
    if name == "Ext":
        from nassau.api.ext import Ext

        return Ext
    if name in __all__:
        from nassau.api import request

        return getattr(request, name)
    raise AttributeError(f"module 'nassau' has no attribute {name!r}")
