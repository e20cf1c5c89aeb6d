"""The GPU path's exceptions, each one line a user can act on."""
from __future__ import annotations


class GpuUnavailableError(RuntimeError):
    """NASSAU_GPU=1 but no usable device (the CLI turns this into exit status 2)."""


class GpuVerifyError(AssertionError):
    """NASSAU_GPU_VERIFY=1 and a device result differs from its CPU recomputation."""


class MasterFullError(MemoryError):
    """The resident admissible master would reach 2^32 elements in one buffer."""
