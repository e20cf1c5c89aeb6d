"""Shared helpers of the gpu tests (no tests here): environment control, random product batches and their
one-at-a-time expected products, and host devices standing in for a GPU."""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest

from algebra.milnor.admissible_master import AdmissibleMaster, admissible_batch_kernel
from algebra.milnor.basis import MilnorBasis
from algebra.milnor.ppart import pack, unpack
from algebra.milnor.products import multiply_one
from fp.packed import from_bool, to_bool, words
from gpu import counters, device, emulate, milnor_twin
from gpu.device import HostDevice


@pytest.fixture
def gpu_env(monkeypatch: pytest.MonkeyPatch):
    """set(**vars): set NASSAU_GPU_<VAR> (or NASSAU_GPU itself as mode=) and re-read; undone afterwards."""

    def set_env(**values: object) -> None:
        for key, value in values.items():
            name = "NASSAU_GPU" if key == "mode" else f"NASSAU_GPU_{key.upper()}"
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, str(value))
        device.reset()

    for name in [k for k in os.environ if k.startswith("NASSAU_GPU")]:
        monkeypatch.delenv(name)
    device.reset()
    counters.reset()
    yield set_env
    device.install(None)
    monkeypatch.undo()
    device.reset()


@pytest.fixture(scope="module")
def emulated() -> dict:
    """The real kernels compiled for the host (gpu.emulate), by name."""
    if emulate.compiler() is None:
        pytest.skip("no host C++ compiler to emulate the kernels")
    return emulate.kernels()


def twin_device() -> HostDevice:
    """numpy in place of cupy, the numpy twin in place of the product kernel."""
    return HostDevice({"milnor_products": lambda grid, block, args: milnor_twin.milnor_products(*args)},
                      name="numpy twin")


@dataclass
class Batch:
    """A random product batch (ProductBatch's fields) with the host master's arrays for it."""

    basis: MilnorBasis
    ncols: int
    row_r: np.ndarray
    row_deg: np.ndarray
    row_terms: np.ndarray
    term_start: np.ndarray
    term_s: np.ndarray
    term_sdeg: np.ndarray
    term_col: np.ndarray
    row_slot: np.ndarray
    start: np.ndarray
    count: np.ndarray
    cs: np.ndarray
    mk: np.ndarray

    def zeros(self, ncols: int | None = None) -> np.ndarray:
        return np.zeros((len(self.row_r), words(self.ncols if ncols is None else ncols)), dtype=np.uint64)

    def args(self, col_map: np.ndarray | None = None) -> tuple:
        """try_run_batch's arguments after `out`."""
        return (self.row_r, self.row_slot, self.row_deg, self.row_terms, self.term_start, self.term_s,
                self.term_sdeg, self.term_col, self.start, self.count, self.cs, self.mk, self.basis.rank_g,
                self.basis.index_map, self.basis.index_map_offset, col_map)

    def admissible(self, out: np.ndarray, col_map: np.ndarray | None = None) -> None:
        """algebra's CPU reference of the batched kernel."""
        cmap = np.zeros(0, dtype=np.int64) if col_map is None else col_map
        admissible_batch_kernel(out, self.row_slot, self.row_deg, self.row_terms, self.term_start, self.term_s,
                                self.term_sdeg, self.term_col, self.start, self.count, self.cs, self.mk,
                                self.basis.rank_g, self.basis.index_map, self.basis.index_map_offset, cmap)

    def one_at_a_time(self) -> np.ndarray:
        """Every product separately through algebra.milnor.products.multiply_one, placed in its block."""
        bits = np.zeros((len(self.row_r), self.ncols), dtype=bool)
        for i in range(len(self.row_r)):
            r = unpack(int(self.row_r[i]))
            lst = self.row_terms[i]
            for q in range(self.term_start[lst], self.term_start[lst + 1]):
                d = int(self.row_deg[i] + self.term_sdeg[q])
                dim = self.basis.dimension(d)
                prod = to_bool(multiply_one(self.basis, r, unpack(int(self.term_s[q])))[None, :], dim)[0]
                c = int(self.term_col[q])
                bits[i, c:c + dim] ^= prod
        return from_bool(bits)


def random_element(rng: np.random.Generator, basis: MilnorBasis, d: int) -> int:
    dim = basis.dimension(d)
    return int(basis.words(d)[rng.integers(dim)]) if dim else pack(())


def random_batch(rng: np.random.Generator, basis: MilnorBasis, rows: int, lists: int, top: int,
                 max_terms: int = 5) -> Batch:
    """Rows P(R) (degree < top/2) times term lists of random P(S) (degree < top/2), each term in its own block."""
    half = top // 2
    degrees = [d for d in range(half) if basis.dimension(d)]
    term_start, term_s, term_sdeg = [0], [], []
    for _ in range(lists):
        for _ in range(int(rng.integers(0, max_terms + 1))):
            d = int(rng.choice(degrees))
            term_s.append(random_element(rng, basis, d))
            term_sdeg.append(d)
        term_start.append(len(term_s))
    term_col, col = [], 0
    for d in term_sdeg:
        term_col.append(col)
        col += max(basis.dimension(rd + d) for rd in degrees)
    row_deg = rng.choice(degrees, size=rows).astype(np.int64)
    row_r = np.array([random_element(rng, basis, int(d)) for d in row_deg], dtype=np.uint64)
    master = AdmissibleMaster()
    row_slot = master.ensure(row_r)
    start, count, cs, mk = master.arrays()
    return Batch(basis, max(col, 1), row_r, row_deg, rng.integers(0, lists, size=rows).astype(np.int64),
                 np.array(term_start, dtype=np.int64), np.array(term_s, dtype=np.uint64),
                 np.array(term_sdeg, dtype=np.int64), np.array(term_col, dtype=np.int64), row_slot, start, count,
                 cs, mk)


def random_col_map(rng: np.random.Generator, ncols: int) -> tuple[np.ndarray, int]:
    """A column map keeping a random third of the columns; returns it and the kept count."""
    keep = np.sort(rng.choice(ncols, size=max(1, ncols // 3), replace=False))
    col_map = np.full(ncols, -1, dtype=np.int64)
    col_map[keep] = np.arange(len(keep))
    return col_map, len(keep)


def random_rank(rng: np.random.Generator, rows: int, ncols: int, rank: int) -> np.ndarray:
    """A packed rows x ncols matrix of rank at most `rank` (a product of random factors)."""
    left = rng.integers(0, 2, size=(rows, rank), dtype=np.uint8)
    right = rng.integers(0, 2, size=(rank, ncols), dtype=np.uint8)
    return from_bool((left.astype(np.int64) @ right) % 2 == 1)
