// Batched Milnor products over the resident admissible master (host side: gpu/products.py).
//
// One thread per (row, term, group of `group` matrices), decoded from the row prefix sums exactly as
// gpu/marshal.py documents; gpu/milnor_twin.py is this kernel's numpy twin. For each matrix X of R the
// per-column test of algebra/admissible.py decides whether P(T) occurs in P(R) P(S); T is ranked with the
// seqno table g (+ a profile's index map) and its bit is XORed into the packed output row with atomicXor.
// All index arithmetic is 64-bit. Layout constants come from the header gpu/layout.py puts in front.

#ifndef NASSAU_MAX_LEN
#error "compile gpu.source.text(path): the layout header of gpu/layout.py, then this file"
#endif

typedef unsigned long long u64;
typedef long long i64;

static_assert(NASSAU_MAT_WIDTH % 8 == 0, "a matrix record must be whole 16-byte vectors");

__constant__ int kFieldShift[NASSAU_MAX_LEN] = {NASSAU_FIELD_SHIFTS};
__constant__ int kFieldBits[NASSAU_MAX_LEN] = {NASSAU_FIELD_BITS};
__constant__ i64 kXi[NASSAU_MAX_LEN] = {NASSAU_XI_DEGREES};

// Largest i in [lo, hi) with prefix[i] <= t (rows without threads are skipped over).
__device__ __forceinline__ i64 find_row(const i64* prefix, i64 lo, i64 hi, i64 t) {
    while (hi - lo > 1) {
        i64 mid = lo + (hi - lo) / 2;
        if (prefix[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
}

// Rank of T (exponents t[0..MAX_LEN)) in degree deg: seqno through g, then the index map if there is one.
__device__ __forceinline__ i64 rank_of(const i64* t, i64 deg, const i64* g, const i64* index_map,
                                       i64 map_len, const i64* map_offset) {
    i64 rank = 0, d = deg;
#pragma unroll
    for (int h = NASSAU_MAX_LEN - 1; h >= 1; --h) {
        i64 rh = t[h];
        if (rh != 0) {
            i64 step = rh * kXi[h];
            rank += g[d * NASSAU_MAX_LEN + h] - g[(d - step) * NASSAU_MAX_LEN + h];
            d -= step;
        }
    }
    return map_len > 0 ? index_map[map_offset[deg] + rank] : rank;
}

// Entry j of a record held as 32-bit words (two uint16 entries each, little-endian).
__device__ __forceinline__ i64 field(const unsigned int* w, int j) {
    return (i64)((w[j >> 1] >> ((j & 1) * 16)) & 0xffffu);
}

extern "C" __global__ void milnor_products(
    u64* out, i64 words, i64 row0, i64 row1, i64 thread0, i64 nthreads,
    const i64* row_prefix, const i64* row_slot, const i64* row_deg, const i64* row_terms,
    const i64* term_start, const u64* term_s, const i64* term_sdeg, const i64* term_col,
    const i64* mat_index, const unsigned short* mats,
    const i64* g, const i64* index_map, i64 map_len, const i64* map_offset,
    const i64* col_map, i64 col_map_len, i64 group)
{
    i64 local = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (local >= nthreads) return;
    i64 t = thread0 + local;
    i64 i = find_row(row_prefix, row0, row1, t);
    i64 slot = row_slot[i];
    i64 first = mat_index[2 * slot], count = mat_index[2 * slot + 1];
    i64 groups = (count + group - 1) / group;
    i64 within = t - row_prefix[i];
    i64 q = term_start[row_terms[i]] + within / groups;
    i64 a = first + (within % groups) * group;
    i64 a_end = a + group < first + count ? a + group : first + count;

    i64 s[NASSAU_MAX_LEN];
    u64 sw = term_s[q];
#pragma unroll
    for (int n = 0; n < NASSAU_MAX_LEN; ++n)
        s[n] = (i64)((sw >> kFieldShift[n]) & ((1ull << kFieldBits[n]) - 1ull));
    i64 deg = row_deg[i] + term_sdeg[q];
    i64 col0 = term_col[q];
    u64* row_out = out + (i - row0) * words;

    // Flips of one word are gathered in a register and flushed with one atomic when the word changes.
    i64 pending_word = -1;
    u64 pending = 0;
    for (; a < a_end; ++a) {
        // One 64-byte record in four 16-byte loads, kept in registers.
        const uint4* rec = reinterpret_cast<const uint4*>(mats + a * NASSAU_MAT_WIDTH);
        unsigned int w[NASSAU_MAT_WIDTH / 2];
#pragma unroll
        for (int k = 0; k < NASSAU_MAT_WIDTH / 8; ++k) {
            const uint4 v = rec[k];
            w[4 * k] = v.x;
            w[4 * k + 1] = v.y;
            w[4 * k + 2] = v.z;
            w[4 * k + 3] = v.w;
        }
        i64 tt[NASSAU_MAX_LEN];
        bool ok = true;
#pragma unroll
        for (int n = 0; n < NASSAU_MAX_DIAG; ++n) {
            const i64 sn = n < NASSAU_MAX_LEN ? s[n] : 0;
            const i64 c = n < NASSAU_MAX_COLS ? field(w, n) : 0;
            const i64 mk = field(w, NASSAU_MAX_COLS + n);
            const i64 x0 = sn - c;
            ok = ok && x0 >= 0 && (x0 & mk) == 0;
            // T_n for n >= MAX_LEN would lie beyond the largest supported degree: it is always 0 here.
            if (n < NASSAU_MAX_LEN) tt[n] = x0 | mk;
        }
        if (!ok) continue;
        i64 col = col0 + rank_of(tt, deg, g, index_map, map_len, map_offset);
        if (col_map_len > 0) {
            col = col_map[col];
            if (col < 0) continue;
        }
        i64 word = col >> 6;
        u64 bit = 1ull << (col & 63);
        if (word == pending_word) {
            pending ^= bit;
        } else {
            if (pending) atomicXor(row_out + pending_word, pending);
            pending_word = word;
            pending = bit;
        }
    }
    if (pending) atomicXor(row_out + pending_word, pending);
}
