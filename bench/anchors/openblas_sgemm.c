/*
 * OpenBLAS anchor for the sgemm benchmarks: times cblas_sgemm (row-major, alpha 1, beta 0) after a
 * warm-up and prints the mean GFLOP/s over the timed calls. Threads: OPENBLAS_NUM_THREADS.
 *   openblas_sgemm N ITERATIONS                  square N×N×N, no transposes
 *   openblas_sgemm M N K TRANS_A TRANS_B ITERATIONS   C[M×N] = op(A)[M×K]·op(B)[K×N], TRANS_* 0 or 1
 * Build: cc -O2 openblas_sgemm.c -o openblas_sgemm -lopenblas
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARMUP_CALLS 3

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Uniform values in [-1, 1) from a fixed LCG, so every run multiplies the same data. */
static float *random_matrix(long count, unsigned seed) {
  float *out = malloc((size_t)count * sizeof(float));
  if (!out) {
    fprintf(stderr, "openblas_sgemm: out of memory\n");
    exit(1);
  }
  for (long i = 0; i < count; i++) {
    seed = seed * 1664525u + 1013904223u;
    out[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
  }
  return out;
}

int main(int argc, char **argv) {
  long m, n, k, iterations;
  int trans_a = 0, trans_b = 0;
  if (argc == 3) {
    m = n = k = atol(argv[1]);
    iterations = atol(argv[2]);
  } else if (argc == 7) {
    m = atol(argv[1]);
    n = atol(argv[2]);
    k = atol(argv[3]);
    trans_a = atoi(argv[4]) != 0;
    trans_b = atoi(argv[5]) != 0;
    iterations = atol(argv[6]);
  } else {
    fprintf(stderr, "usage: openblas_sgemm N ITERATIONS | openblas_sgemm M N K TRANS_A TRANS_B ITERATIONS\n");
    return 2;
  }
  if (m < 1 || n < 1 || k < 1 || iterations < 1) {
    fprintf(stderr, "openblas_sgemm: sizes and iterations must be positive\n");
    return 2;
  }
  float *a = random_matrix(m * k, 1), *b = random_matrix(k * n, 2), *c = random_matrix(m * n, 3);
  const enum CBLAS_TRANSPOSE op_a = trans_a ? CblasTrans : CblasNoTrans;
  const enum CBLAS_TRANSPOSE op_b = trans_b ? CblasTrans : CblasNoTrans;
  const long lda = trans_a ? m : k, ldb = trans_b ? k : n;
  for (int i = 0; i < WARMUP_CALLS; i++)
    cblas_sgemm(CblasRowMajor, op_a, op_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
  const double start = seconds();
  for (long i = 0; i < iterations; i++)
    cblas_sgemm(CblasRowMajor, op_a, op_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
  const double elapsed = seconds() - start;
  printf("%.3f GFLOP/s\n", 2.0 * (double)m * (double)n * (double)k * (double)iterations / elapsed / 1e9);
  free(a);
  free(b);
  free(c);
  return 0;
}
