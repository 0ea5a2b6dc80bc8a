/* allreduce_check.h -- what allreduce_check.c (the run: cases, expected paths, fallbacks) takes
 * from allreduce_check_data.c (the data and the comparisons) and allreduce_check_fallback.c (the
 * calls that must fall back), and what they take from it. */
#ifndef SDNMPI_ALLREDUCE_CHECK_H
#define SDNMPI_ALLREDUCE_CHECK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "check_common.h"

/* The seeded generator: seed_rng(a, b, c) starts a stream, rnd() 64 random bits, unif() [0, 1). */
void seed_rng(uint64_t a, uint64_t b, uint64_t c);
uint64_t rnd(void);
double unif(void);

/* count elements of t for op at buf (element e at e x extent), as rank `rank` of `size` makes
 * them: values whose reduction stays in range and, for integer and MIN/MAX/logical/bitwise ops,
 * does not depend on the order. */
void gen(const struct tdesc *t, MPI_Op op, char *buf, int count, MPI_Aint extent, int rank,
         int size);

/* 8-bit integer SUM (t, op): FAIL unless the exact sums of the ranks' count elements at buf (as
 * gen makes them) fit t, so that no SUM kernel saturates or wraps (Open MPI 4.1's op/avx 8-bit SUM
 * saturates, and then results depend on the order). Collective on comm; nothing for other cases. */
void check_sum_in_range(const struct tdesc *t, MPI_Op op, const char *buf, int count,
                        MPI_Aint extent, MPI_Comm comm);

/* Bitwise equality of the meaningful bytes of one element (long double padding ignored). */
int same_bits(const struct tdesc *t, const char *a, const char *b);

/* Floating SUM/PROD: |a - b| <= a few ulps x (log2(p) + 2) of |b| (complex: per component). */
int close_enough(const struct tdesc *t, const char *a, const char *b, int p);

/* The run's tallies (allreduce_check.c): cases checked, calls per path (sdnmpi_test_last_path's
 * numbers) and the paths' names. */
extern long long cases;
extern long long path_count[6];
extern const char *const path_names[6];

/* One call that must fall back: SDN_MPI_Allreduce's path is PMPI and its `bytes` of result equal
 * PMPI_Allreduce's (counted as a case). */
void fallback_case(MPI_Comm comm, const char *what, const void *send, int count, MPI_Datatype dt,
                   MPI_Op op, size_t bytes);

/* The derived-datatype and user-op fallbacks on MPI_COMM_WORLD. */
void run_fallbacks(uint64_t seed, int world_rank);

#endif
