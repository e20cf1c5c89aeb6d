"""The CUDA kernels compiled for the host CPU, so their own source runs (and is tested) without a device.

A small prelude maps the CUDA built-ins the kernels use onto C++: threadIdx and friends become thread-local
globals, atomics become host atomics, and each kernel gets an `emu_<name>(grid, block, args)` entry taking
its arguments as CUDA's launch API does (an array of pointers to the values). A launch of a single block
runs its threads as real OS threads with __syncthreads as a barrier, so block-level kernels (the RREF pivot
search) run with several threads sharing their __shared__ state; larger grids run their threads one after
another (__syncthreads is then a no-op, which is right for kernels that do not use it). What this cannot
show is the device's own scheduling and memory model: that is what the device tests are for.
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
#include <barrier>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
struct EmuDim { unsigned x, y, z; };
struct uint4 { unsigned x, y, z, w; };
static thread_local EmuDim threadIdx, blockIdx, blockDim, gridDim;
static std::barrier<>* emu_barrier = nullptr;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __constant__ static const
static inline void __syncthreads() { if (emu_barrier) emu_barrier->arrive_and_wait(); }
static inline unsigned long long atomicXor(unsigned long long* p, unsigned long long v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
static inline long long atomicMin(long long* p, long long v) {
    long long o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < o && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return o;
}
"""

HARNESS = r"""
template <typename... A, std::size_t... I>
static void emu_call(void (*k)(A...), void** args, std::index_sequence<I...>) {
    k(*static_cast<std::remove_reference_t<A>*>(args[I])...);
}
template <typename... A>
static void emu_thread(void (*k)(A...), unsigned grid, unsigned block, unsigned b, unsigned t, void** args) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    blockIdx = {b, 0, 0};
    threadIdx = {t, 0, 0};
    emu_call(k, args, std::index_sequence_for<A...>{});
}
template <typename... A>
static void emu_run(void (*k)(A...), unsigned grid, unsigned block, void** args) {
    if (grid == 1 && block > 1) {  // one block: real threads, __syncthreads a barrier
        std::barrier<> barrier(block);
        emu_barrier = &barrier;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t) threads.emplace_back(emu_thread<A...>, k, grid, block, 0u, t, args);
        for (auto& th : threads) th.join();
        emu_barrier = nullptr;
        return;
    }
    for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) emu_thread(k, grid, block, b, t, args);
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
        subprocess.run([cxx, "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w", "-o", str(tmp), str(src)],
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


def host_device(block_threads: int = 8, workdir: Path | None = None) -> HostDevice:
    """A HostDevice running the real kernel sources on the CPU, block-level kernels on `block_threads` threads."""
    return HostDevice(kernels(workdir), name="host emulation of gpu/kernels", block_threads=block_threads)
