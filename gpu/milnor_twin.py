"""The numpy twin of milnor.cu's `milnor_products`: the same threads, decoded the same way, vectorised.

It takes the kernel's arguments in the kernel's order, so a HostDevice can run it in the kernel's place;
`reference` runs a whole batch through it on the host master's arrays (NASSAU_GPU_VERIFY's default check).
"""
from __future__ import annotations

import numpy as np

from gpu import marshal
from gpu.layout import FIELD_MASK, FIELD_SHIFT, MAX_COLS, MAX_DIAG, MAX_LEN, XI_DEGREES, records

#: Threads evaluated together (bounds the twin's scratch memory).
CHUNK = 1 << 16
_SHIFT = np.array(FIELD_SHIFT, dtype=np.uint64)
_XI = np.array(XI_DEGREES, dtype=np.int64)


def unpack(words: np.ndarray) -> np.ndarray:
    """Exponents (n, MAX_LEN) int64 of packed p-parts."""
    return ((words[:, None] >> _SHIFT[None, :]) & FIELD_MASK[None, :]).astype(np.int64)


def milnor_products(out, words, row0, row1, thread0, nthreads, row_prefix, row_slot, row_deg, row_terms,
                    term_start, term_s, term_sdeg, term_col, mat_index, mats, g, index_map, map_len, map_offset,
                    col_map, col_map_len, group) -> None:
    """XOR into out (rows row0..row1 of the batch) every product of threads thread0 .. thread0 + nthreads."""
    out = out.reshape(-1, int(words))
    mat_index = mat_index.reshape(-1, 2)
    mats = mats.reshape(-1, mats.shape[-1])
    g = g.reshape(-1, MAX_LEN)
    for c0 in range(0, int(nthreads), CHUNK):
        t = int(thread0) + np.arange(c0, min(c0 + CHUNK, int(nthreads)), dtype=np.int64)
        rows = marshal.find_rows(row_prefix, int(row0), int(row1), t)
        first, count = mat_index[row_slot[rows], 0], mat_index[row_slot[rows], 1]
        groups = (count + group - 1) // group
        within = t - row_prefix[rows]
        q = term_start[row_terms[rows]] + within // groups
        a0 = first + (within % groups) * group
        s = np.zeros((len(t), MAX_DIAG), dtype=np.int64)
        s[:, :MAX_LEN] = unpack(term_s[q])
        deg = row_deg[rows] + term_sdeg[q]
        for k in range(int(group)):
            a = a0 + k
            live = a < first + count
            m = mats[a[live]].astype(np.int64)
            cs = np.zeros((len(m), MAX_DIAG), dtype=np.int64)
            cs[:, :MAX_COLS] = m[:, :MAX_COLS]
            mk = m[:, MAX_COLS:MAX_COLS + MAX_DIAG]
            x0 = s[live] - cs
            ok = np.all(x0 >= 0, axis=1) & np.all((np.maximum(x0, 0) & mk) == 0, axis=1)
            tt = (x0[ok] | mk[ok])[:, :MAX_LEN]
            d_all = deg[live][ok]
            d = d_all.copy()
            rank = np.zeros(len(tt), dtype=np.int64)
            for h in range(MAX_LEN - 1, 0, -1):
                step = tt[:, h] * _XI[h]
                rank += g[d, h] - g[d - step, h]
                d -= step
            if map_len > 0:
                rank = index_map[map_offset[d_all] + rank]
            col = term_col[q[live][ok]] + rank
            out_rows = rows[live][ok] - row0
            if col_map_len > 0:
                col = col_map[col]
                keep = col >= 0
                col, out_rows = col[keep], out_rows[keep]
            bits = np.left_shift(np.uint64(1), (col & 63).astype(np.uint64))
            np.bitwise_xor.at(out, (out_rows, col >> 6), bits)


def reference(out: np.ndarray, row_slot: np.ndarray, row_deg: np.ndarray, row_terms: np.ndarray,
              term_start: np.ndarray, term_s: np.ndarray, term_sdeg: np.ndarray, term_col: np.ndarray,
              start: np.ndarray, count: np.ndarray, cs: np.ndarray, mk: np.ndarray, g: np.ndarray,
              index_map: np.ndarray, map_offset: np.ndarray, col_map: np.ndarray,
              group: int = marshal.GROUP) -> None:
    """XOR a whole batch into `out` through the twin, reading the host master (start, count, cs, mk) directly."""
    row_counts = count[row_slot]
    row_prefix = marshal.prefix(marshal.row_threads(row_terms, term_start, row_counts, group))
    milnor_products(out, out.shape[1], 0, len(row_slot), 0, int(row_prefix[-1]), row_prefix, row_slot, row_deg,
                    row_terms, term_start, term_s, term_sdeg, term_col, np.stack([start, count], axis=1),
                    records(cs, mk), g, index_map, len(index_map), map_offset, col_map, len(col_map), group)
