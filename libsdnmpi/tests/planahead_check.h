/* planahead_check.h -- what planahead_check.c and planahead_comms.c share. */
#ifndef PLANAHEAD_CHECK_H
#define PLANAHEAD_CHECK_H

#include <mpi.h>
#include <stdint.h>

/* Sleeps ms milliseconds. */
void sleep_ms(long ms);

/* The value of timing slot `name` (sdnmpi_test_timings), or -1. */
double slot(const char *name);

/* One call of each case on comm (int64 and double sums, MPI_MAX of doubles), SDN_MPI_Allreduce
 * against PMPI_Allreduce, bit for bit (FAIL on a mismatch): the first call's path. */
int one_call(MPI_Comm comm, int count, uint64_t seed);

/* The communicators made through SDN_MPI_Comm_dup / SDN_MPI_Comm_split (planahead_comms.c). */
void comms_check(int count, long gap_ms);

#endif
