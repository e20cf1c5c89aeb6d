/* Tiny bridge for benchmarks/bench_fp.py: reduce packed rows with libm4ri's mzd_echelonize_m4ri(A, 1, 0).
 * Rows are copied in and out (m4ri's words are 64-bit, least significant bit first, like ours); only the
 * echelonize call is timed. Returns the rank, or -1 if the matrix could not be allocated. */
#include <m4ri/m4ri.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

int echelon(uint64_t *data, int rows, int cols, int words, double *seconds) {
  mzd_t *A = mzd_init(rows, cols);
  if (!A) return -1;
  for (int i = 0; i < rows; i++) memcpy(mzd_row(A, i), data + (size_t)i * words, (size_t)words * 8);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rank = mzd_echelonize_m4ri(A, 1, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  for (int i = 0; i < rows; i++) memcpy(data + (size_t)i * words, mzd_row(A, i), (size_t)words * 8);
  mzd_free(A);
  return rank;
}
