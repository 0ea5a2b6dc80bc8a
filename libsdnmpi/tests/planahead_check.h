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

/* The first calls (one_call) on comms[0..n) in turn, MPI_COMM_NULL where this rank is not in one
 * (collective over MPI_COMM_WORLD), then world rank 0 prints, for each, what its rank 0 saw:
 *   planahead_comm: name=N leader=W path=A ahead=X age=S
 * (leader: its world rank; path: the first call's, as sdnmpi_test_last_path; ahead, age: the
 * plan's timing slots plan_ahead, plan_ahead_age; -1 for a communicator nobody is in). */
#define MAX_REPORTED 16
void first_calls_report(int n, const char *const *names, const MPI_Comm *comms, int count);

/* The communicators made through SDN_MPI_Comm_split_type, SDN_MPI_Comm_dup_with_info,
 * SDN_MPI_Comm_create_group and MPI_Comm_idup (planahead_kinds.c); hosts: SDN_MPI_FAKE_HOSTS. */
void kinds_check(int count, long gap_ms, int hosts);

/* `rounds` communicators whose first SDN_MPI_Allreduce runs while an MPI_Comm_idup of them is
 * pending (idup 0: no idups; planahead_idup.c); world rank 0 prints a planahead_idup line. */
void idup_check(int count, int rounds, int idup);

#endif
