"""The CUDA sources under gpu/kernels and the options every compiler builds them with.

NVRTC (through CuPy, on a device), nvcc (the PTX test) and the host C++ compiler (gpu.emulate) all compile
the same text, `text(path)`: the layout header of gpu/layout.py followed by the file, so what the tests
compile is what the device runs.
"""
from __future__ import annotations

import re
from pathlib import Path

from gpu import layout

KERNEL_DIR = Path(__file__).with_name("kernels")
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(')


def files() -> list[Path]:
    return sorted(KERNEL_DIR.glob("*.cu"))


def kernel_names(path: Path) -> list[str]:
    """The extern "C" kernels a source file defines, in order."""
    return _KERNEL.findall(path.read_text())


def file_of(kernel: str) -> Path:
    for path in files():
        if kernel in kernel_names(path):
            return path
    raise KeyError(f"no kernel named {kernel!r} under {KERNEL_DIR}")


def text(path: Path) -> str:
    """The compilable source of a kernel file: layout header, then the file (with a #line to keep its numbers)."""
    return layout.header() + f'#line 1 "{path.name}"\n' + path.read_text()
