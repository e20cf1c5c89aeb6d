"""Entry point for batched Milnor products on the device: `takes` (would it take a batch this large?) and
`try_run_batch`. This module is all that algebra imports of the backend.

`algebra` calls it with a ProductBatch's plain arrays and its admissible master's arrays; it either computes
every product on the device and XORs the results into `out` (True) or declines (False: the device is off,
the batch is below NASSAU_GPU_MIN_WORK, or the resident master is full) and the caller runs its CPU path.

One call: the R's not yet resident are uploaded to the master; the per-row arrays, term lists and column map
go up as one flat buffer; the seqno tables come from the device cache; then one launch per row block (see
gpu/marshal.py), each into a block zeroed on the device, downloaded and XORed into `out`.
"""
from __future__ import annotations

import logging
from typing import Callable

import numpy as np

from gpu import config, counters, device, marshal, milnor_twin
from gpu.errors import GpuVerifyError, MasterFullError
from gpu.layout import MAX_LEN
from gpu.master import resident
from gpu.tables import tables

LOG = logging.getLogger("nassau.gpu")


def takes(cells: int) -> bool:
    """Whether a batch of `cells` output bits would go to the device (NASSAU_GPU allows it and one answers, and it
    is at least NASSAU_GPU_MIN_WORK): asked before the caller readies the batch's admissible master."""
    return device.current() is not None and cells >= config.current().min_work


def try_run_batch(out: np.ndarray, row_r: np.ndarray, row_slot: np.ndarray, row_deg: np.ndarray,
                  row_terms: np.ndarray, term_start: np.ndarray, term_s: np.ndarray, term_sdeg: np.ndarray,
                  term_col: np.ndarray, start: np.ndarray, count: np.ndarray, cs: np.ndarray, mk: np.ndarray,
                  g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray | None = None,
                  *, cpu: Callable[[np.ndarray], None] | None = None) -> bool:
    """XOR every product of the batch into `out` on the device and return True, or return False untouched.

    The arguments are those of algebra.milnor.admissible_master.admissible_batch_kernel plus row_r, the packed R of each
    row (the device master is keyed by R; row_slot indexes the host master start/count/cs/mk). All integer
    arrays are int64 (term_s and row_r uint64), g is the (degrees, MAX_LEN) seqno table, index_map/map_offset
    are empty for the full algebra and col_map is None or int64 with -1 for dropped columns.
    With NASSAU_GPU_VERIFY=1 the batch is recomputed on the CPU by `cpu(zeroed_like_out)` (or by the numpy
    twin when cpu is None) and any difference raises GpuVerifyError.
    """
    cfg = config.current()
    dev = device.current()
    if dev is None or len(row_r) == 0 or out.shape[0] * out.shape[1] * 64 < cfg.min_work:
        return False
    if g.ndim != 2 or g.shape[1] != MAX_LEN:
        raise ValueError(f"g must be the (degrees, {MAX_LEN}) seqno table, got shape {g.shape}")
    for name, table in (("g", g), ("index_map", index_map), ("map_offset", map_offset)):
        if table.dtype != np.int64 or not table.flags.c_contiguous:
            raise ValueError(f"{name} must be a C-contiguous int64 array (it is kept on the device as is)")
    cmap = np.zeros(0, dtype=np.int64) if col_map is None else col_map
    target = np.zeros_like(out) if cfg.verify else out
    try:
        _run(dev, target, row_r, row_slot, row_deg, row_terms, term_start, term_s, term_sdeg, term_col,
             start, count, cs, mk, g, index_map, map_offset, cmap)
    except MasterFullError as exc:
        LOG.warning("products stay on the CPU: %s", exc)
        return False
    if cfg.verify:
        expected = np.zeros_like(out)
        if cpu is not None:
            cpu(expected)
        else:
            milnor_twin.reference(expected, row_slot, row_deg, row_terms, term_start, term_s, term_sdeg, term_col,
                                  start, count, cs, mk, g, index_map, map_offset, cmap)
        _check(target, expected)
        out ^= target
    return True


def _run(dev: device.Device, out: np.ndarray, row_r: np.ndarray, row_slot: np.ndarray, row_deg: np.ndarray,
         row_terms: np.ndarray, term_start: np.ndarray, term_s: np.ndarray, term_sdeg: np.ndarray,
         term_col: np.ndarray, start: np.ndarray, count: np.ndarray, cs: np.ndarray, mk: np.ndarray,
         g: np.ndarray, index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray) -> None:
    cfg = config.current()
    xp = dev.xp
    words = out.shape[1]
    group = marshal.GROUP
    master = resident(dev)
    with dev.section():
        slots = master.ensure(row_r, row_slot, start, count, cs, mk)
        row_prefix = marshal.prefix(marshal.row_threads(row_terms, term_start, master.counts(slots), group))
        launches = marshal.split(row_prefix, words * 8, cfg.block_bytes, marshal.MAX_THREADS)
        flat = marshal.Flat.pack(row_prefix=row_prefix, row_slot=slots, row_deg=row_deg, row_terms=row_terms,
                                 term_start=term_start, term_s=term_s, term_sdeg=term_sdeg, term_col=term_col,
                                 col_map=col_map)
        d = flat.views(dev.upload(flat.data))
        cache = tables(dev)
        g_d, map_d, offset_d = cache.get(g), cache.get(index_map), cache.get(map_offset)
        counters.debug(f"products: {len(row_r)} rows x {words} words, {int(row_prefix[-1])} threads, "
                       f"{len(launches)} launches, {flat.data.nbytes} bytes marshalled")
        for launch in launches:
            nbytes = launch.rows * words * 8
            with dev.admission.admit(nbytes), master.reading() as (mats, index):
                block = xp.zeros((launch.rows, words), dtype=xp.uint64)
                dev.launch("milnor_products", launch.threads, (
                    block, np.int64(words), np.int64(launch.row0), np.int64(launch.row1),
                    np.int64(launch.thread0), np.int64(launch.threads),
                    d["row_prefix"], d["row_slot"], d["row_deg"], d["row_terms"],
                    d["term_start"], d["term_s"].view(xp.uint64), d["term_sdeg"], d["term_col"],
                    index, mats, g_d, map_d, np.int64(len(index_map)), offset_d,
                    d["col_map"], np.int64(len(col_map)), np.int64(group)))
                out[launch.row0:launch.row1] ^= dev.download(block)
    counters.add("device_batches")


def _check(got: np.ndarray, expected: np.ndarray) -> None:
    """Raise GpuVerifyError naming the first difference."""
    if np.array_equal(got, expected):
        return
    rows, words = np.nonzero(got != expected)
    raise GpuVerifyError(f"NASSAU_GPU_VERIFY: device products differ from the CPU in {len(np.unique(rows))} rows; "
                         f"first at row {rows[0]}, word {words[0]}: device {int(got[rows[0], words[0]]):#x}, "
                         f"cpu {int(expected[rows[0], words[0]]):#x}")
