// Reduced row echelon form of a packed F2 matrix on the device, one 64-column panel at a time
// (host side and the argument for exactness: gpu/rref.py).
//
// Per panel (word w of every row), five launches:
//   rref_search   one block: finds the panel's pivots among the free rows (Gaussian elimination on the
//                 rows' 64-bit windows), makes them mutually reduced, records each pivot as a combination
//                 of the chosen rows, and appends the pivots to the global list;
//   rref_combine  builds the pivot rows U_j (from word w on) from those combinations;
//   rref_tables   M4RI tables: every XOR of 8 consecutive pivot rows, for each group of 8;
//   rref_coef     each row's coefficients: the bits of its window at the pivot positions;
//   rref_update   every other row XORs one table entry per group; a chosen row becomes its U_j.
// Rows are never moved: flag[i] is -1 for a free row and the pivot's index once row i holds a pivot; the
// host gathers the pivot rows in order at the end. All index arithmetic is 64-bit.

typedef unsigned long long u64;
typedef long long i64;

#define FREE_ROW (-1)
#define CHOSEN_ROW (-2)
#define NONE_YET 0x7fffffffffffffffLL
#define TABLE_BITS 8
#define TABLE_SIZE (1 << TABLE_BITS)

// state[0] = rank so far, state[1] = rank before this panel, state[2] = pivots found in this panel.
extern "C" __global__ void rref_search(
    const u64* A, i64 m, i64 nw, i64 w, u64 valid, int* flag, u64* xr, u64* xc,
    i64* state, i64* pos, i64* prow, u64* comb, i64* pivot_row, i64* pivot_col)
{
    __shared__ u64 s_or;      // OR of the reduced windows of the free rows
    __shared__ i64 s_best;    // the first free row with the current bit
    __shared__ int s_k;       // pivots found so far in this panel
    __shared__ u64 pw[64];    // reduced window of each pivot
    __shared__ u64 pc[64];    // each pivot as a combination of the chosen rows (bit l: chosen row l)
    __shared__ int ppos[64];
    __shared__ i64 prw[64];
    const i64 tid = threadIdx.x, nthreads = blockDim.x;
    const i64 rank0 = state[0];
    if (tid == 0) { s_or = 0; s_k = 0; }
    __syncthreads();
    u64 local_or = 0;
    for (i64 i = tid; i < m; i += nthreads) {
        u64 x = flag[i] == FREE_ROW ? (A[i * nw + w] & valid) : 0ull;
        xr[i] = x;
        xc[i] = 0;
        local_or |= x;
    }
    atomicOr(&s_or, local_or);
    __syncthreads();
    for (int b = 0; b < 64; ++b) {
        if (!((s_or >> b) & 1ull)) continue;  // no free row has this bit: not a pivot column
        if (tid == 0) s_best = NONE_YET;
        __syncthreads();
        i64 mine = NONE_YET;
        for (i64 i = tid; i < m; i += nthreads)
            if (flag[i] == FREE_ROW && ((xr[i] >> b) & 1ull)) { mine = i; break; }
        if (mine != NONE_YET) atomicMin(&s_best, mine);
        __syncthreads();
        const i64 best = s_best;
        __syncthreads();
        if (best == NONE_YET) continue;
        if (tid == 0) {
            const int j = s_k;
            ppos[j] = b;
            prw[j] = best;
            pw[j] = xr[best];
            pc[j] = xc[best] | (1ull << j);
            flag[best] = CHOSEN_ROW;
            s_k = j + 1;
            s_or = 0;
        }
        __syncthreads();
        const u64 pivot_window = pw[s_k - 1], pivot_comb = pc[s_k - 1];
        local_or = 0;
        for (i64 i = tid; i < m; i += nthreads) {
            if (flag[i] != FREE_ROW) continue;
            u64 x = xr[i];
            if ((x >> b) & 1ull) {
                x ^= pivot_window;
                xr[i] = x;
                xc[i] ^= pivot_comb;
            }
            local_or |= x;
        }
        atomicOr(&s_or, local_or);
        __syncthreads();
    }
    if (tid == 0) {
        const int k = s_k;
        // Back substitution: clear every later pivot's position from each pivot window.
        for (int j = k - 1; j >= 0; --j)
            for (int l = j + 1; l < k; ++l)
                if ((pw[j] >> ppos[l]) & 1ull) { pw[j] ^= pw[l]; pc[j] ^= pc[l]; }
        for (int j = 0; j < k; ++j) {
            pos[j] = ppos[j];
            prow[j] = prw[j];
            comb[j] = pc[j];
            flag[prw[j]] = (int)(rank0 + j);
            pivot_row[rank0 + j] = prw[j];
            pivot_col[rank0 + j] = w * 64 + ppos[j];
        }
        state[1] = rank0;
        state[2] = k;
        state[0] = rank0 + k;
    }
}

// U[j, v] (v >= w) = XOR of the chosen rows in pivot j's combination. Threads: 64 x (nw - w).
extern "C" __global__ void rref_combine(const u64* A, i64 nw, i64 w, const i64* state, const i64* prow,
                                        const u64* comb, u64* U)
{
    const i64 width = nw - w;
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 64 * width) return;
    const i64 j = t / width, v = w + t % width;
    if (j >= state[2]) return;
    u64 acc = 0;
    for (u64 c = comb[j]; c; c &= c - 1) {
        int l = 0;
        while (!((c >> l) & 1ull)) ++l;
        acc ^= A[prow[l] * nw + v];
    }
    U[j * nw + v] = acc;
}

// tables[g, e, v] = XOR of U[8g + bit] over the set bits of e. Threads: 8 x 256 x (nw - w).
extern "C" __global__ void rref_tables(const u64* U, i64 nw, i64 w, const i64* state, u64* tables)
{
    const i64 width = nw - w;
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (64 / TABLE_BITS) * TABLE_SIZE * width) return;
    const i64 g = t / (TABLE_SIZE * width), e = (t / width) % TABLE_SIZE, v = w + t % width;
    const i64 k = state[2];
    if (g * TABLE_BITS >= k) return;
    u64 acc = 0;
    for (int bit = 0; bit < TABLE_BITS; ++bit)
        if (((e >> bit) & 1) && g * TABLE_BITS + bit < k) acc ^= U[(g * TABLE_BITS + bit) * nw + v];
    tables[(g * TABLE_SIZE + e) * nw + v] = acc;
}

// coef[i] bit j = bit pos[j] of row i's window (0 for this panel's pivot rows). Threads: m.
extern "C" __global__ void rref_coef(const u64* A, i64 m, i64 nw, i64 w, const int* flag, const i64* state,
                                     const i64* pos, u64* coef)
{
    const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const i64 rank0 = state[1], k = state[2];
    if (k == 0) return;
    const i64 f = flag[i];
    u64 c = 0;
    if (!(f >= rank0 && f < rank0 + k)) {
        const u64 x = A[i * nw + w];
        for (i64 j = 0; j < k; ++j) c |= ((x >> pos[j]) & 1ull) << j;
    }
    coef[i] = c;
}

// Row i, word v >= w: clear the panel's pivot columns (or become pivot row U_j). Threads: m x (nw - w).
extern "C" __global__ void rref_update(u64* A, i64 m, i64 nw, i64 w, const int* flag, const i64* state,
                                       const u64* coef, const u64* U, const u64* tables)
{
    const i64 width = nw - w;
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m * width) return;
    const i64 rank0 = state[1], k = state[2];
    if (k == 0) return;
    const i64 i = t / width, v = w + t % width;
    const i64 f = flag[i];
    if (f >= rank0 && f < rank0 + k) {
        A[i * nw + v] = U[(f - rank0) * nw + v];
        return;
    }
    const u64 c = coef[i];
    if (c == 0) return;
    u64 acc = 0;
    for (i64 g = 0; g * TABLE_BITS < k; ++g)
        acc ^= tables[(g * TABLE_SIZE + ((c >> (g * TABLE_BITS)) & (TABLE_SIZE - 1))) * nw + v];
    A[i * nw + v] ^= acc;
}
