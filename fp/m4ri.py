"""Row reduction to RREF over F2 by the method of four Russians (M4RI), compiled with numba.

The matrix is processed in column blocks. For a block starting at column c:

1. Pivot search on 64-bit *windows* (columns c..c+63 of each row, kept in a scratch array): a plain forward
   elimination on single words, lazy (a row is reduced by the block's pivots only when the scan looks at it), so
   an empty column costs a few bit operations per row rather than full-row additions. The chosen rows are swapped
   to the front; up to NTAB tables of at most k pivots each are filled.
2. The block's pivot rows are made mutually reduced with full-row additions (at most K^2 of them, K = pivots),
   chosen on the windows first so that no branch depends on a data bit (see _reduce_block).
3. Each table holds all 2^k combinations of its k pivot rows (built by doubling: 2^k - 1 row additions).
4. Every other row (above the block too, so the result is *reduced* echelon form) does one lookup per table and
   XORs the NTAB table rows in one pass over its words: the row is read and written once per block, not once per
   table. Because the block's pivot rows are mutually reduced, the lookups of all tables can be taken from the
   row as it was before the pass.

A table index is taken from a span of window bits through a small lookup table (`luts`), so pivot columns need not
be contiguous (rank-deficient blocks); non-pivot bits inside the span are ignored by the lookup. A row whose
lookups are all zero is left alone. In the same pass each row below the block refreshes its window for the next
block while its words are in cache.

The parallel variant fills the NTAB tables as one task each, then splits the row pass of step 4 over threads in
chunks of rows (numba prange, 'omp' layer); pivot search and block reduction stay serial (a few percent of the
work on large inputs). Small inputs (GAUSS_MAX_ROWS, GAUSS_MAX_CELLS) take a plain Gauss-Jordan path without any
allocation but the pivot array.

Kernels index arrays in place (a[i, w]) and call no jitted helper with array arguments inside loops: row views and
such calls cost atomic reference-count updates, which took over half the time of a first version. Word loops run
over unsigned ranges, which lets LLVM vectorise them (signed ranges keep negative-index wrap-around code).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from . import kernel_cache
from .bits import ctz
from .packed import check_matrix
from .threads import use_threads

NTAB = 4
"""Tables per block; the row pass XORs this many table rows at once (unused tables point at their zero row)."""

SPAN_EXTRA = 3
"""A table's pivots may spread over at most k + SPAN_EXTRA window columns (its lookup has 2^span entries)."""

TABLE_BYTES_MAX = 32 << 20
"""Memory budget of the tables (NTAB * 2^k rows of the matrix's width): k shrinks for very wide matrices."""

GAUSS_MAX_ROWS = 128
GAUSS_MAX_CELLS = 1600
"""Matrices of at most GAUSS_MAX_ROWS rows and GAUSS_MAX_CELLS rows * words take the plain Gauss-Jordan path.
Measured on random matrices (us per call, Gauss-Jordan vs M4RI): 100 x 1000 25.8 vs 25.4, 128 x 64 12.9 vs 14.0,
32 x 2048 4.5 vs 6.0; past them M4RI wins: 150 x 64 15.5 vs 14.7, 64 x 4000 26.5 vs 22.2, 128 x 2000 59.5 vs 47.6."""

COLD_MAX_CELLS = 1 << 15
COLD_WORK_BUDGET = 4 << 30
"""Until the M4RI kernel has been compiled once (a first run after installation starts from an empty numba cache),
reductions of at most COLD_MAX_CELLS rows * words take Gauss-Jordan, as long as their summed work (rows * rank *
words, word operations) stays under COLD_WORK_BUDGET: compiling M4RI costs about 8 s, more than Gauss-Jordan loses on
such matrices in a small run (S_2 through stem 40: no reduction needs it). A larger reduction, or the budget spent,
compiles M4RI, and the marker file M4RI_MARKER in numba's cache directory makes every later run use it as before.
The RREF is unique, so the choice never changes a result."""

M4RI_MARKER = "m4ri.compiled"

PARALLEL_MIN_WORK = 1 << 16
"""parallel=None uses threads from rows * words = 2^16 (2048 x 2048) on, if cores are idle (fp.threads)."""

DEVICE_MIN = 1024
"""Reductions with min(rows, ncols) from here on are offered to the GPU backend (gpu.rref), which takes them when
NASSAU_GPU allows and the size passes its own threshold, and logs each one for --trace either way."""

COUNTERS = {"calls": 0, "m4ri_calls": 0, "parallel_calls": 0, "tables": 0, "device_calls": 0}
"""Test hook: row_reduce calls, calls that took the M4RI path (and of those the threaded variant), tables built
(as reported by the kernel), and reductions the GPU backend took.
Updated from Python without a lock, so counts are exact only when one thread calls row_reduce at a time."""

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@njit(cache=True, nogil=True)
def _window(a, i, c):
    """Columns c..c+63 of row i as one word (column c in bit 0); bits beyond the row's words read as zero.
    Not for inner loops (a call with array arguments costs atomic reference-count updates)."""
    w = c >> 6
    nw = a.shape[1]
    if w >= nw:
        return _ZERO
    s = c & 63
    x = a[i, w] >> np.uint64(s)
    if s != 0 and w + 1 < nw:
        x |= a[i, w + 1] << np.uint64(64 - s)
    return x


@njit(cache=True, nogil=True)
def _swap_rows(a, i, j, w0):
    """Exchange words w0.. of rows i and j (both are zero before w0). Called once per pivot, not per row."""
    if i != j:
        for w in range(np.uint64(w0), np.uint64(a.shape[1])):
            t = a[i, w]
            a[i, w] = a[j, w]
            a[j, w] = t


@njit(cache=True, nogil=True)
def _gauss_jordan(a, ncols):
    """Plain Gauss-Jordan elimination for tiny matrices. Returns the pivot columns.

    For each pivot the rows to clear are first collected as bit sets (64 rows per word, no branches) and then
    walked with ctz: a per-row "is the bit set?" branch is mispredicted half the time on random data (this took
    50 x 100 from 15.0 to about 6 us per call)."""
    m = a.shape[0]
    nw = a.shape[1]
    pivots = np.empty(min(m, ncols), dtype=np.int64)
    r = 0
    for c in range(ncols):
        if r == m:
            break
        w0 = c >> 6
        s = np.uint64(c & 63)
        p = -1
        for i in range(r, m):
            if (a[i, w0] >> s) & _ONE:
                p = i
                break
        if p < 0:
            continue
        _swap_rows(a, p, r, w0)
        for g in range(0, m, 64):
            sel = _ZERO
            for i in range(g, min(g + 64, m)):
                sel |= ((a[i, w0] >> s) & _ONE) << np.uint64(i - g)
            if g <= r < g + 64:
                sel &= ~(_ONE << np.uint64(r - g))
            while sel:
                i = g + ctz(sel)
                sel &= sel - _ONE
                for w in range(np.uint64(w0), np.uint64(nw)):
                    a[i, w] ^= a[r, w]
        pivots[r] = c
        r += 1
    return pivots[:r]


@njit(cache=True, nogil=True)
def _find_block(a, r, c, ncols, k, win, rc, pos, pw, tab_lo, tab_cnt):
    """Choose the next block's pivot rows among rows r.. and swap them to rows r, r+1, ... in column order.

    win[i] is row i's window at column c, lazily reduced by the first rc[i] pivots of this block (pw holds the
    pivots' reduced windows, pos their window columns). Returns (found, tables used, next block's start column).
    """
    m = a.shape[0]
    limit = min(64, ncols - c)
    max_span = k + SPAN_EXTRA
    found = 0
    nt = 0
    b = 0
    while b < limit and r + found < m:
        needs_new_table = nt == 0 or tab_cnt[nt - 1] == k or b - tab_lo[nt - 1] >= max_span
        if needs_new_table and nt == NTAB:
            break
        bit = _ONE << np.uint64(b)
        hit = -1
        for i in range(r + found, m):
            x = win[i]
            for l in range(rc[i], found):
                x ^= pw[l] & (_ZERO - ((x >> np.uint64(pos[l])) & _ONE))
            win[i] = x
            rc[i] = found
            if x & bit:
                hit = i
                break
        if hit >= 0:
            dst = r + found
            _swap_rows(a, hit, dst, c >> 6)
            win[hit], win[dst] = win[dst], win[hit]
            rc[hit], rc[dst] = rc[dst], rc[hit]
            if needs_new_table:
                tab_lo[nt] = b
                tab_cnt[nt] = 0
                nt += 1
            tab_cnt[nt - 1] += 1
            pos[found] = b
            pw[found] = win[dst]
            found += 1
        b += 1
    return found, nt, c + b


@njit(cache=True, nogil=True)
def _reduce_block(a, r, found, c, pos, pw, fw):
    """Make the block's pivot rows r..r+found-1 mutually reduced (identity on their pivot columns).

    Which rows to add is worked out on the 64-bit windows alone (pw: the pivots' forward-reduced windows from the
    search; fw: scratch), as a bit set per row, and only the additions in that set are done, walking it with ctz:
    no data-dependent branch per pair of rows (a per-pair "is the bit set?" test is mispredicted half the time on
    random data and took 40% of a 100 x 200 reduction)."""
    w0 = c >> 6
    nw = a.shape[1]
    for l in range(1, found):  # forward: clear the earlier pivot columns from row r+l
        x = _window(a, r + l, c)
        sel = _ZERO
        for j in range(l):
            bit = (x >> np.uint64(pos[j])) & _ONE
            x ^= pw[j] & (_ZERO - bit)
            sel |= bit << np.uint64(j)
        while sel:
            j = ctz(sel)
            sel &= sel - _ONE
            for w in range(np.uint64(w0), np.uint64(nw)):
                a[r + l, w] ^= a[r + j, w]
    for l in range(found):
        fw[l] = pw[l]
    for l in range(found - 1, 0, -1):  # backward: clear row r+l's pivot column from the rows before it
        sel = _ZERO
        for j in range(l):
            bit = (fw[j] >> np.uint64(pos[l])) & _ONE
            fw[j] ^= fw[l] & (_ZERO - bit)
            sel |= bit << np.uint64(j)
        while sel:
            j = ctz(sel)
            sel &= sel - _ONE
            for w in range(np.uint64(w0), np.uint64(nw)):
                a[r + j, w] ^= a[r + l, w]


@njit(cache=True, nogil=True)
def _fill_table(a, r, t, nt, tab_cnt, tables, w0):
    """Words w0.. of table t: entry e is the sum of t's pivot rows selected by the bits of e (built by doubling,
    one row addition per entry). A table t >= nt keeps only its zero entry."""
    nw = a.shape[1]
    first = r
    for u in range(min(t, nt)):
        first += tab_cnt[u]
    for w in range(np.uint64(w0), np.uint64(nw)):
        tables[t, 0, w] = 0
    cnt = tab_cnt[t] if t < nt else 0
    for j in range(cnt):
        half = 1 << j
        for e in range(half):
            for w in range(np.uint64(w0), np.uint64(nw)):
                tables[t, half + e, w] = tables[t, e, w] ^ a[first + j, w]


@njit(cache=True, nogil=True, parallel=True)
def _fill_tables_parallel(a, r, nt, tab_cnt, tables, w0):
    """The tables are independent: one task each (on this 2-core machine, 8192^2 went from 77 to 69 ms)."""
    for t in prange(NTAB):
        _fill_table(a, r, t, nt, tab_cnt, tables, w0)


@njit(cache=True, nogil=True)
def _fill_luts(nt, pos, tab_lo, tab_cnt, luts, spans):
    """luts[t] maps the bits of table t's window span to the index of the matching table entry, ignoring the
    non-pivot columns inside the span. Unused tables get span 0 (every row looks up their zero entry)."""
    first = 0
    for t in range(NTAB):
        luts[t, 0] = 0
        if t >= nt:
            tab_lo[t] = 0
            spans[t] = 0
            continue
        cnt = tab_cnt[t]
        lo = tab_lo[t]
        span = pos[first + cnt - 1] - lo + 1
        spans[t] = span
        j = 0
        for q in range(span):
            size = 1 << q
            add = 0
            if pos[first + j] == lo + q:
                add = 1 << j
                j += 1
            for p in range(size):
                luts[t, size + p] = luts[t, p] | add
        first += cnt


@njit(cache=True, nogil=True)
def _update_range(a, lo, hi, c, next_c, refresh, tab_lo, spans, tables, luts, win, rc):
    """Clear the block's pivot columns from rows lo..hi-1 (one lookup per table, one pass over each row's words);
    with `refresh`, store each row's window at next_c for the next block's search."""
    nw = a.shape[1]
    w0 = c >> 6
    s0 = np.uint64(c & 63)
    spill0 = s0 != 0 and w0 + 1 < nw
    w1 = next_c >> 6
    s1 = np.uint64(next_c & 63)
    spill1 = s1 != 0 and w1 + 1 < nw
    m0 = (_ONE << np.uint64(spans[0])) - _ONE
    m1 = (_ONE << np.uint64(spans[1])) - _ONE
    m2 = (_ONE << np.uint64(spans[2])) - _ONE
    m3 = (_ONE << np.uint64(spans[3])) - _ONE
    lo0 = np.uint64(tab_lo[0])
    lo1 = np.uint64(tab_lo[1])
    lo2 = np.uint64(tab_lo[2])
    lo3 = np.uint64(tab_lo[3])
    for i in range(lo, hi):
        x = a[i, w0] >> s0
        if spill0:
            x |= a[i, w0 + 1] << (np.uint64(64) - s0)
        i0 = luts[0, (x >> lo0) & m0]
        i1 = luts[1, (x >> lo1) & m1]
        i2 = luts[2, (x >> lo2) & m2]
        i3 = luts[3, (x >> lo3) & m3]
        if i0 | i1 | i2 | i3:  # sparse rows often miss the block's pivot columns entirely
            for w in range(np.uint64(w0), np.uint64(nw)):
                a[i, w] ^= tables[0, i0, w] ^ tables[1, i1, w] ^ tables[2, i2, w] ^ tables[3, i3, w]
        if refresh:
            y = _ZERO
            if w1 < nw:
                y = a[i, w1] >> s1
                if spill1:
                    y |= a[i, w1 + 1] << (np.uint64(64) - s1)
            win[i] = y
            rc[i] = 0


PARALLEL_CHUNK = 64
"""Rows per task of the parallel row pass."""


@njit(cache=True, nogil=True, parallel=True)
def _update_rows_parallel(a, r, found, c, next_c, tab_lo, spans, tables, luts, win, rc):
    """The row pass of one block over all threads: chunks of rows above the block, then below it."""
    m = a.shape[0]
    above = (r + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK
    below = (m - r - found + PARALLEL_CHUNK - 1) // PARALLEL_CHUNK
    for t in prange(above + below):
        if t < above:
            lo = t * PARALLEL_CHUNK
            _update_range(a, lo, min(lo + PARALLEL_CHUNK, r), c, next_c, False, tab_lo, spans, tables, luts, win, rc)
        else:
            lo = r + found + (t - above) * PARALLEL_CHUNK
            _update_range(a, lo, min(lo + PARALLEL_CHUNK, m), c, next_c, True, tab_lo, spans, tables, luts, win, rc)


@njit(cache=True, nogil=True)
def choose_k(rows):
    """Bits per table: minimise (2 * 2^k + rows) / k, the cost per pivot of building a table (an entry costs about
    two row updates: it is written, not only read) and of the `rows` lookups. Fitted to the measured best k for
    64 to 8192 rows."""
    best = 2
    for k in range(3, 9):
        if ((2 << k) + rows) * best < ((2 << best) + rows) * k:
            best = k
    return best


@njit(cache=True, nogil=True)
def _setup(a, k):
    """The working arrays of one reduction (k = 0: choose_k), and every row's first window."""
    m, nw = a.shape
    if k <= 0:
        k = choose_k(m)
        while k > 2 and (NTAB << k) * nw * 8 > TABLE_BYTES_MAX:
            k -= 1
    win = np.empty(m, dtype=np.uint64)
    for i in range(m):
        win[i] = _window(a, i, 0)
    return (k, np.empty((NTAB, 1 << k, nw), dtype=np.uint64), np.empty((NTAB, 1 << (k + SPAN_EXTRA)), dtype=np.int32),
            win, np.zeros(m, dtype=np.int64), np.empty(64, dtype=np.int64), np.empty(64, dtype=np.uint64),
            np.empty(64, dtype=np.uint64), np.zeros(NTAB, dtype=np.int64), np.zeros(NTAB, dtype=np.int64),
            np.zeros(NTAB, dtype=np.int64))


@njit(cache=True, nogil=True)
def _next_block(a, r, c, ncols, st):
    """Find the next block of pivots from (r, c), reduce it and build its lookups; the tables and the row pass
    are left to the caller (serial or threaded). Returns (pivots found, tables, next column)."""
    k, tables, luts, win, rc, pos, pw, fw, tab_lo, tab_cnt, spans = st
    found, nt, next_c = _find_block(a, r, c, ncols, k, win, rc, pos, pw, tab_lo, tab_cnt)
    if found == 0:
        for i in range(r, a.shape[0]):
            win[i] = _window(a, i, next_c)
            rc[i] = 0
    else:
        _reduce_block(a, r, found, c, pos, pw, fw)
        _fill_luts(nt, pos, tab_lo, tab_cnt, luts, spans)
    return found, nt, next_c


@njit(cache=True, nogil=True)
def _m4ri(a, ncols, k):
    """Reduce `a` in place to RREF with k-bit tables (k = 0: choose_k), on this thread. Returns (pivot columns,
    tables built). The threaded variant (_m4ri_threaded) walks the same blocks; keeping it out of this kernel
    means a run that never threads never compiles the parallel code."""
    m = a.shape[0]
    st = _setup(a, k)
    tables, luts, win, rc, pos, tab_lo, tab_cnt, spans = st[1], st[2], st[3], st[4], st[5], st[8], st[9], st[10]
    pivots = np.empty(min(m, ncols), dtype=np.int64)
    r = 0
    c = 0
    built = 0
    while r < m and c < ncols:
        found, nt, next_c = _next_block(a, r, c, ncols, st)
        if found:
            built += nt
            for t in range(NTAB):
                _fill_table(a, r, t, nt, tab_cnt, tables, c >> 6)
            _update_range(a, 0, r, c, next_c, False, tab_lo, spans, tables, luts, win, rc)
            _update_range(a, r + found, m, c, next_c, True, tab_lo, spans, tables, luts, win, rc)
            for l in range(found):
                pivots[r + l] = c + pos[l]
            r += found
        c = next_c
    return pivots[:r], built


def _m4ri_threaded(a: np.ndarray, ncols: int, k: int) -> tuple[np.ndarray, int]:
    """_m4ri with the table fills and row passes of each block spread over threads (a block per compiled call)."""
    m = a.shape[0]
    st = _setup(a, k)
    tables, luts, win, rc, pos, tab_lo, tab_cnt, spans = st[1], st[2], st[3], st[4], st[5], st[8], st[9], st[10]
    pivots = np.empty(min(m, ncols), dtype=np.int64)
    r = c = built = 0
    while r < m and c < ncols:
        found, nt, next_c = _next_block(a, r, c, ncols, st)
        if found:
            built += nt
            _fill_tables_parallel(a, r, nt, tab_cnt, tables, c >> 6)
            _update_rows_parallel(a, r, found, c, next_c, tab_lo, spans, tables, luts, win, rc)
            pivots[r:r + found] = c + pos[:found]
            r += found
        c = next_c
    return pivots[:r], built


def row_reduce(a: np.ndarray, ncols: int, *, parallel: bool | None = None) -> np.ndarray:
    """Reduce the packed matrix `a` IN PLACE to reduced row echelon form and return its pivot columns (int64).

    Pivots are searched among columns < ncols; row additions act on whole rows, so words beyond ncols are carried
    along (an augmented tail). Afterwards rows 0..rank-1 are the pivot rows in increasing pivot-column order and the
    remaining rows are zero on columns < ncols. parallel=None picks threads by size and idle cores (fp.threads);
    False forces one thread, True the threaded variant.
    """
    check_matrix(a, ncols)
    COUNTERS["calls"] += 1
    m, nw = a.shape
    if gauss_fits(m, nw) or _cold_gauss(m, ncols, nw):
        return _gauss_jordan(a, ncols)
    if min(m, ncols) >= DEVICE_MIN:
        # The GPU backend takes large reductions when NASSAU_GPU allows (and logs each one for --trace).
        from gpu.rref import try_row_reduce

        pivots = try_row_reduce(a, ncols, cpu=lambda b, n: _m4ri_path(b, n, False))
        if pivots is not None:
            COUNTERS["device_calls"] += 1
            return pivots
    return _m4ri_path(a, ncols, parallel)


def gauss_fits(rows: int, nwords: int) -> bool:
    """Whether a rows x nwords packed matrix is small enough for plain Gauss-Jordan (GAUSS_MAX_ROWS, _CELLS)."""
    return rows <= GAUSS_MAX_ROWS and rows * nwords <= GAUSS_MAX_CELLS


def small_kernel(a: np.ndarray, ncols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """For a small packed A (rows x ncols), what reducing [A | I] gives, split: the pivot columns of its image, the
    identity part of those rows (x with x A = the image row: a quasi-inverse's preimages), and ker A (over A's
    rows) as RREF rows with their pivots; None when [A | I] is too large for Gauss-Jordan (row_reduce's own
    threshold).

    The same as Augmented's [A | I] reduction (RREF is unique), in three compiled calls instead of a dozen numpy
    and Python steps: the step of every small bidegree, and every Nassau signature, asks for it."""
    check_matrix(a, ncols)
    m, wa = a.shape
    if not gauss_fits(m, wa + (m + 63) // 64):
        return None
    COUNTERS["calls"] += 1
    aug = _with_identity(a)
    return _split_rows(aug, _gauss_jordan(aug, wa * 64 + m), ncols, wa)  # rank m: the identity has full rank


# Three compiled calls, not one: a kernel calling _gauss_jordan compiles its body again inside its own (a first run
# after installation compiled 1.1-2.2 s for it), while these two loops compile in a fraction of that and share
# row_reduce's Gauss-Jordan. Plain loops only: slice assignments and copies of views make numba compile its
# broadcasting and message-formatting machinery too (4.2 s).
@njit(cache=True, nogil=True)
def _with_identity(a):
    m, wa = a.shape
    aug = np.zeros((m, wa + ((m + 63) >> 6)), dtype=np.uint64)
    for i in range(m):
        for w in range(wa):
            aug[i, w] = a[i, w]
        aug[i, wa + (i >> 6)] = _ONE << np.uint64(i & 63)
    return aug


@njit(cache=True, nogil=True)
def _split_rows(aug, pivots, ncols, wa):
    """Image pivots and rows' identity parts, kernel rows and pivots, from the reduced [A | I] (see small_kernel)."""
    m, wide = aug.shape
    rank = 0
    while rank < m and pivots[rank] < ncols:
        rank += 1
    image = np.empty(rank, dtype=np.int64)
    preimages = np.empty((rank, wide - wa), dtype=np.uint64)
    kernel = np.empty((m - rank, wide - wa), dtype=np.uint64)
    kernel_pivots = np.empty(m - rank, dtype=np.int64)
    for r in range(m):
        if r < rank:
            image[r] = pivots[r]
            for w in range(wa, wide):
                preimages[r, w - wa] = aug[r, w]
        else:
            kernel_pivots[r - rank] = pivots[r] - wa * 64
            for w in range(wa, wide):
                kernel[r - rank, w - wa] = aug[r, w]
    return image, preimages, kernel, kernel_pivots


_COLD = {"compiled": None, "work": 0}
"""Whether the serial M4RI kernel is compiled (None: not looked up yet), and the Gauss-Jordan work done instead.
Updated without a lock: two threads may both spend a little of the budget, which only moves when M4RI compiles."""


def m4ri_compiled() -> bool:
    """True once the serial M4RI kernel has run in this process or in an earlier run on the same numba cache."""
    if _COLD["compiled"] is None:
        _COLD["compiled"] = kernel_cache.marked(M4RI_MARKER)
    return _COLD["compiled"]


def _cold_gauss(m: int, ncols: int, nw: int) -> bool:
    """Take Gauss-Jordan for this reduction because M4RI is not compiled yet (see COLD_MAX_CELLS)."""
    if m * nw > COLD_MAX_CELLS or m4ri_compiled():
        return False
    work = m * min(m, ncols) * nw
    if _COLD["work"] + work > COLD_WORK_BUDGET:
        return False
    _COLD["work"] += work
    return True


def _m4ri_serial(a: np.ndarray, ncols: int) -> tuple[np.ndarray, int]:
    """_m4ri, leaving the marker that tells later runs it is compiled."""
    result = _m4ri(a, ncols, 0)
    if not _COLD["compiled"]:
        _COLD["compiled"] = True
        kernel_cache.mark(M4RI_MARKER)
    return result


def _m4ri_path(a: np.ndarray, ncols: int, parallel: bool | None) -> np.ndarray:
    m, nw = a.shape
    if parallel is None:
        parallel = use_threads(m * nw, PARALLEL_MIN_WORK)
    pivots, built = _m4ri_threaded(a, ncols, 0) if parallel else _m4ri_serial(a, ncols)
    COUNTERS["m4ri_calls"] += 1
    COUNTERS["parallel_calls"] += parallel
    COUNTERS["tables"] += built
    return pivots
