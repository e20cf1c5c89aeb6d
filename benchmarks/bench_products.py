"""Milnor products per second on real work: the rows of d_s in stem 80 of the sphere.

    python benchmarks/bench_products.py [--stem 80] [--repeat 5]

Resolves S_2 through the stem (s <= 15), then for each s in --rows-of builds the whole matrix of d_s in
degree t = stem + s on the old generators, three ways: the batched enumeration kernel (what the engine
runs), the admissible-matrix kernel over the cached master (the GPU path's twin; the master's memory is
reported), and the one-at-a-time twin (multiply_one in a Python loop, on a sample of rows because it is
slow). Products are (row, term) pairs; times are min/median over repeats. The results are checked equal.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from bench_resolve import machine

from algebra.milnor.admissible_master import AdmissibleMaster, admissible_batch_kernel
from algebra.milnor.ppart import unpack
from algebra.milnor.products import multiply_one, run_batch
from algebra.module.loader import load_module
from nassau.engine.region import Region
from nassau.engine.resolve import resolve


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stem", type=int, default=80)
    ap.add_argument("--rows-of", type=int, nargs="+", default=[2, 5, 10, 15])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sample", type=int, default=150, help="rows for the one-at-a-time twin")
    args = ap.parse_args()
    print(f"# machine: {machine()}")
    start = time.perf_counter()
    res = resolve(load_module("S_2"), Region(max_s=15, min_degree=0, max_stem=args.stem), "nassau", 1)
    print(f"# resolved S_2 through stem {args.stem}, s <= 15 in {time.perf_counter() - start:.1f} s")
    basis = res.algebra
    print(" s    t   rows  products | batched Mprod/s (min/med) | admissible Mprod/s  master MiB | "
          "one-at-a-time kprod/s")
    for s in args.rows_of:
        t = args.stem + s
        d, fs, target = res.differential(s), res.free(s), res.free(s - 1)
        rows = np.arange(fs.dimension(t, fs.gens_below(t)), dtype=np.int64)
        ngens = target.gens_below(t + 1)
        width = target.dimension(t, ngens)
        batch = d.batch(t, rows)
        lists = batch.term_start[batch.row_terms + 1] - batch.term_start[batch.row_terms]
        n_products = int(lists.sum())
        out = np.zeros((len(rows), (width + 63) // 64), dtype=np.uint64)

        def batched() -> None:
            out[:] = 0
            run_batch(out, batch, basis)

        b_min, b_med = timed(batched, args.repeat)
        expected = out.copy()
        master = AdmissibleMaster()
        slots = master.ensure(batch.row_r)
        arrays = master.arrays()
        out2 = np.zeros_like(out)
        empty = np.zeros(0, dtype=np.int64)

        def admissible() -> None:
            out2[:] = 0
            admissible_batch_kernel(out2, slots, batch.row_deg, batch.row_terms, batch.term_start, batch.term_s,
                                    batch.term_sdeg, batch.term_col, *arrays, basis.rank_g, basis.index_map,
                                    basis.index_map_offset, empty)

        a_min, a_med = timed(admissible, args.repeat)
        assert np.array_equal(out2, expected)
        sample = rows[:: max(1, len(rows) // args.sample)]
        one_products = 0
        start = time.perf_counter()
        for i in sample:
            r = unpack(int(batch.row_r[i]))
            lst = batch.row_terms[i]
            row = np.zeros(out.shape[1], dtype=np.uint64)
            for q in range(batch.term_start[lst], batch.term_start[lst + 1]):
                prod = multiply_one(basis, r, unpack(int(batch.term_s[q])))
                bits = np.nonzero(np.unpackbits(prod.view(np.uint8), bitorder="little"))[0]
                for k in bits:
                    c = int(batch.term_col[q] + k)
                    row[c >> 6] ^= np.uint64(1) << np.uint64(c & 63)
                one_products += 1
            assert np.array_equal(row, expected[i])
        one = one_products / (time.perf_counter() - start)
        print(f"{s:2d} {t:4d} {len(rows):6d} {n_products:9d} | {n_products / b_min / 1e6:8.2f} / "
              f"{n_products / b_med / 1e6:6.2f}         | {n_products / a_min / 1e6:8.2f} {master.nbytes / 2**20:12.1f}"
              f" | {one / 1e3:8.1f}", flush=True)


if __name__ == "__main__":
    main()
