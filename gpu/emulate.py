"""The CUDA kernels compiled for the host CPU, so their own source runs (and is tested) without a device.

A small prelude maps the CUDA built-ins the kernels use onto plain C++ (threadIdx and friends become
thread-local globals, atomics become plain read-modify-writes, __syncthreads does nothing), and each
kernel gets an `emu_<name>(grid, block, args)` entry that runs its threads one after another, taking its
arguments as CUDA's launch API does (an array of pointers to the values). Sequential threads cannot honour
__syncthreads, so block-level kernels must be launched with one thread per block (HostDevice
block_threads=1); every other kernel runs with its real block size. Races are therefore not exercised here:
that is what the device tests are for.
"""
from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gpu import source
from gpu.device import HostDevice, Kernel

PRELUDE = r"""
#include <cstddef>
#include <utility>
#include <type_traits>
struct EmuDim { unsigned x, y, z; };
static thread_local EmuDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __constant__ static const
static inline void __syncthreads() {}
static inline unsigned long long atomicXor(unsigned long long* p, unsigned long long v) { unsigned long long o = *p; *p = o ^ v; return o; }
static inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) { unsigned long long o = *p; *p = o | v; return o; }
static inline long long atomicMin(long long* p, long long v) { long long o = *p; if (v < o) *p = v; return o; }
static inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { unsigned long long o = *p; *p = o + v; return o; }
"""

HARNESS = r"""
template <typename... A, std::size_t... I>
static void emu_call(void (*k)(A...), void** args, std::index_sequence<I...>) {
    k(*static_cast<std::remove_reference_t<A>*>(args[I])...);
}
template <typename... A>
static void emu_run(void (*k)(A...), unsigned grid, unsigned block, void** args) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            emu_call(k, args, std::index_sequence_for<A...>{});
        }
}
"""

_SCALARS = {np.dtype(np.int64): ctypes.c_int64, np.dtype(np.uint64): ctypes.c_uint64,
            np.dtype(np.int32): ctypes.c_int32, np.dtype(np.uint32): ctypes.c_uint32}


def compiler() -> str | None:
    """The host C++ compiler, or None."""
    return shutil.which("g++") or shutil.which("c++")


def build(path: Path, workdir: Path | None = None) -> ctypes.CDLL:
    """Compile one kernel file for the host; the library is cached by the source's hash."""
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("no host C++ compiler (g++) to emulate the kernels with")
    names = source.kernel_names(path)
    code = PRELUDE + source.text(path) + HARNESS + "".join(
        f'extern "C" void emu_{n}(unsigned g, unsigned b, void** a) {{ emu_run({n}, g, b, a); }}\n' for n in names)
    digest = hashlib.sha256(code.encode()).hexdigest()[:16]
    out_dir = workdir or Path(tempfile.gettempdir()) / "nassau-gpu-emulate"
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"{path.stem}-{digest}.so"
    if not lib.exists():
        src = out_dir / f"{path.stem}-{digest}.cpp"
        src.write_text(code)
        tmp = lib.with_suffix(".so.tmp")
        subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-o", str(tmp), str(src)],
                       check=True, capture_output=True, text=True)
        tmp.replace(lib)
    return ctypes.CDLL(str(lib))


def _pointer_to(arg: Any, keep: list) -> ctypes.c_void_p:
    """A pointer to the value of one kernel argument (an array's data pointer, or a typed scalar)."""
    if isinstance(arg, np.ndarray):
        if not arg.flags.c_contiguous:
            raise ValueError("kernel array arguments must be C-contiguous")
        value: Any = ctypes.c_void_p(arg.ctypes.data)
    elif isinstance(arg, np.generic) and arg.dtype in _SCALARS:
        value = _SCALARS[arg.dtype](arg.item())
    else:
        raise TypeError(f"kernel arguments must be numpy arrays or sized numpy integers, got {type(arg).__name__}")
    keep.append(value)
    return ctypes.cast(ctypes.pointer(value), ctypes.c_void_p)


def kernels(workdir: Path | None = None) -> dict[str, Kernel]:
    """Every kernel of gpu/kernels as a host launcher with cupy.RawKernel's call signature."""
    table: dict[str, Kernel] = {}
    for path in source.files():
        lib = build(path, workdir)
        for name in source.kernel_names(path):
            fn = getattr(lib, f"emu_{name}")
            fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)]
            fn.restype = None

            def launch(grid: tuple[int, ...], block: tuple[int, ...], args: tuple, fn: Any = fn) -> None:
                keep: list = []
                ptrs = (ctypes.c_void_p * max(1, len(args)))(*[_pointer_to(a, keep) for a in args])
                fn(grid[0], block[0], ptrs)

            table[name] = launch
    return table


def host_device(workdir: Path | None = None) -> HostDevice:
    """A HostDevice running the real kernel sources on the CPU (block-level kernels with one thread)."""
    return HostDevice(kernels(workdir), name="host emulation of gpu/kernels", block_threads=1)
