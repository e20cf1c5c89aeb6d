"""The device and its array module, chosen at run time; CuPy is imported lazily, never with the package.

Everything but the kernels is written against `Device`: `xp` is cupy on a GPU and numpy in a `HostDevice`,
whose kernels are CPU stand-ins (the numpy twin, or the real CUDA source compiled for the host by
gpu.emulate). That is how marshalling, block splitting, the resident master and the RREF driver are tested
on machines without a GPU. `current()` applies NASSAU_GPU: auto uses a device when CuPy imports and one
answers, 1 requires one (GpuUnavailableError otherwise), 0 never uses one.
"""
from __future__ import annotations

import contextlib
import threading
import time
from types import ModuleType
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from gpu import config, counters, source
from gpu.admission import Admission
from gpu.errors import GpuUnavailableError
from gpu.lock import DEVICE_LOCK
from gpu.streams import StreamPool

#: A launcher: (grid, block, args) as in cupy.RawKernel.__call__.
Kernel = Callable[[tuple[int, ...], tuple[int, ...], tuple], None]
#: Threads per block of the flat (one thread per item) kernels.
BLOCK = 256


class Device:
    """A place to run kernels: its array module, kernels, streams, admission and per-device state."""

    def __init__(self, name: str, xp: ModuleType, stream_factory: Callable[[], Any], block_threads: int) -> None:
        cfg = config.current()
        self.name = name
        self.xp = xp
        #: Threads per block for the block-level kernels (1 where __syncthreads cannot be honoured).
        self.block_threads = block_threads
        self.streams: StreamPool[Any] = StreamPool(cfg.streams, stream_factory)
        self.admission = Admission(cfg.budget_bytes)
        self._state: dict[str, Any] = {}
        self._state_lock = threading.Lock()

    # -- kernels and transfers (subclasses) ---------------------------------------------------------
    def kernel(self, name: str) -> Kernel:
        raise NotImplementedError

    def _to_device(self, host: np.ndarray) -> Any:
        raise NotImplementedError

    def _into_device(self, dst: Any, host: np.ndarray) -> None:
        raise NotImplementedError

    def _to_host(self, arr: Any) -> np.ndarray:
        raise NotImplementedError

    def _synchronize(self, stream: Any) -> None:
        raise NotImplementedError

    def fence(self) -> None:
        """Wait until the calling thread's stream has finished its work (so other streams may read it)."""
        self._synchronize(self.streams.get())

    def pool_bytes(self) -> int:
        return 0

    # -- counted operations -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _timed(self, name: str) -> Iterator[None]:
        """Under NASSAU_GPU_DEBUG, add the enclosed work's nanoseconds to counter `name`: the thread's stream is
        waited for before and after, so that a launch's or a copy's time is its own, not its predecessors'."""
        if not config.current().debug:
            yield
            return
        self.fence()
        start = time.perf_counter_ns()
        yield
        self.fence()
        counters.add(name, time.perf_counter_ns() - start)

    def launch(self, name: str, threads: int, args: tuple, block: int = BLOCK) -> None:
        """Run kernel `name` over `threads` threads (none: no launch), `block` per block."""
        if threads <= 0:
            return
        grid = -(-threads // block)
        kernel = self.kernel(name)  # compiled on first use: not the kernel's time
        with self._timed("kernel_ns"):
            kernel((grid,), (block,), args)
        counters.add("launches")

    def upload(self, host: np.ndarray) -> Any:
        host = np.ascontiguousarray(host)
        counters.add("bytes_uploaded", host.nbytes)
        with self._timed("upload_ns"):
            return self._to_device(host)

    def upload_into(self, dst: Any, host: np.ndarray) -> None:
        """Copy `host` into the contiguous device array `dst` (a view into a larger buffer)."""
        host = np.ascontiguousarray(host)
        counters.add("bytes_uploaded", host.nbytes)
        with self._timed("upload_ns"):
            self._into_device(dst, host)

    def download(self, arr: Any) -> np.ndarray:
        with self._timed("download_ns"):
            host = self._to_host(arr)
        counters.add("bytes_downloaded", host.nbytes)
        return host

    @contextlib.contextmanager
    def section(self) -> Iterator[None]:
        """A device section: the device lock shared, the thread's stream current, the stream drained at exit."""
        with DEVICE_LOCK.shared():
            stream = self.streams.get()
            with stream:
                try:
                    yield
                finally:
                    self._synchronize(stream)
            counters.peak("peak_pool_bytes", self.pool_bytes())

    def state(self, key: str, factory: Callable[[], Any]) -> Any:
        """Per-device state (the resident master, table cache), made once on first use."""
        with self._state_lock:
            if key not in self._state:
                self._state[key] = factory()
            return self._state[key]


class CupyDevice(Device):
    """A CUDA device through CuPy; kernels are compiled by NVRTC from gpu/kernels on first use."""

    def __init__(self, cupy: ModuleType) -> None:
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        super().__init__(name, cupy, lambda: cupy.cuda.Stream(non_blocking=True), block_threads=1024)
        self._cupy = cupy
        self._modules: dict[str, Any] = {}
        self._kernels: dict[str, Kernel] = {}
        self._lock = threading.Lock()

    def kernel(self, name: str) -> Kernel:
        with self._lock:
            if name not in self._kernels:
                path = source.file_of(name)
                if path.name not in self._modules:
                    self._modules[path.name] = self._cupy.RawModule(code=source.text(path))
                    counters.debug(f"compiled {path.name}")
                self._kernels[name] = self._modules[path.name].get_function(name)
            return self._kernels[name]

    def _to_device(self, host: np.ndarray) -> Any:
        return self._cupy.asarray(host)

    def _into_device(self, dst: Any, host: np.ndarray) -> None:
        dst.set(host)

    def _to_host(self, arr: Any) -> np.ndarray:
        return arr.get()

    def _synchronize(self, stream: Any) -> None:
        stream.synchronize()

    def pool_bytes(self) -> int:
        return int(self._cupy.get_default_memory_pool().total_bytes())


class HostDevice(Device):
    """numpy standing in for cupy; `kernels` maps each kernel name to a CPU stand-in with the same arguments."""

    def __init__(self, kernels: Mapping[str, Kernel], name: str = "host stand-in", block_threads: int = 1) -> None:
        super().__init__(name, np, contextlib.nullcontext, block_threads)
        self._kernels = dict(kernels)

    def kernel(self, name: str) -> Kernel:
        return self._kernels[name]

    def _to_device(self, host: np.ndarray) -> np.ndarray:
        return host.copy()

    def _into_device(self, dst: np.ndarray, host: np.ndarray) -> None:
        dst[...] = host

    def _to_host(self, arr: np.ndarray) -> np.ndarray:
        return np.array(arr, copy=True)

    def _synchronize(self, stream: Any) -> None:
        pass


_lock = threading.Lock()
_detected: tuple[Device | None, str] | None = None
_installed: Device | None = None


def _detect() -> tuple[Device | None, str]:
    """Open the CUDA device, or say why not."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that cannot find its CUDA libraries
        return None, f"CuPy is not importable ({exc.__class__.__name__}: {exc}); install the 'gpu' extra"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy found no CUDA device"
        dev = CupyDevice(cupy)
    except Exception as exc:
        return None, f"no CUDA device answers ({exc.__class__.__name__}: {exc})"
    counters.debug(f"device {dev.name}")
    return dev, ""


def current() -> Device | None:
    """The device to use now, or None for the CPU path (GpuUnavailableError when NASSAU_GPU=1 has none)."""
    global _detected
    cfg = config.current()
    if cfg.mode == "0":
        return None
    if _installed is not None:
        return _installed
    with _lock:
        if _detected is None:
            _detected = _detect()
        dev, reason = _detected
    if dev is None and cfg.mode == "1":
        raise GpuUnavailableError(f"NASSAU_GPU=1 but no GPU can be used: {reason}")
    return dev


def unavailable_reason() -> str:
    """Why detection found no device ("" when it found one), detecting first if needed."""
    global _detected
    with _lock:
        if _detected is None:
            _detected = _detect()
        return _detected[1]


def install(device: Device | None) -> Device | None:
    """Use `device` instead of the detected one (tests install a HostDevice); returns the previous one."""
    global _installed
    previous, _installed = _installed, device
    return previous


def reset() -> None:
    """Re-read the environment and detect again on next use (tests that change NASSAU_GPU* call this)."""
    global _detected
    config.reset()
    with _lock:
        _detected = None
