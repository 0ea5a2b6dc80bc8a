/* sdnmpi_testing.h -- test-only hooks (libsdnmpi/tests). Not installed, not an API. */
#ifndef SDNMPI_TESTING_H
#define SDNMPI_TESTING_H

#include <mpi.h>
#include <stddef.h>

/* What the last SDN_MPI_Allreduce of this process did: 0 no call yet, 1 PMPI_Allreduce
 * (fallback), 2 recursive doubling, 3 Rabenseifner, 4 nothing (count 0), 5 hierarchical. */
int sdnmpi_test_last_path(void);

/* Makes this process's SDN_MPI_Allreduce use algorithm `path` (2 recursive doubling, 3
 * Rabenseifner, 5 hierarchical) whenever its preconditions hold, instead of the selection rule,
 * at any size (the size threshold, SDN_MPI_MIN_BYTES or its default, does not apply; the other
 * fallbacks do), or (1) always PMPI_Allreduce; 0 restores the rule. For benchmarks and tests that
 * compare the algorithms: every rank of a communicator must force alike. Returns 0, or -1 for an
 * unknown path. Not exported from the shared libraries: link libsdnmpi.a. */
int sdnmpi_test_force_allreduce(int path);

/* Where the private communicator of comm's allreduce plan came from (enum sdnmpi_priv_from,
 * plan.h: 0 none, 1 the library's communicator itself, 2 a group's creation on it, 3 the split of
 * comm), or -1 if comm has no plan. */
int sdnmpi_test_plan_priv(MPI_Comm comm);

/* 1 while the library's deferred communicator is under way (plan_comm.h), else 0. Only in the
 * preload library (preload_comm.c), exported: plain_worldcomms finds it with dlsym. */
int sdnmpi_test_libworld_pending(void);

/* Makes this process's hierarchical allreduce keep up to `depth` segments in its pipeline's first
 * step (allreduce_hier.c) instead of SDN_MPI_HIER_DEPTH's (or the default depth); 0 restores
 * those. Each rank's own, as SDN_MPI_HIER_DEPTH (it changes no message); the bench's variants
 * set it alike on every rank. Returns 0, or -1
 * for a depth outside 0..64. Not exported from the shared libraries. */
int sdnmpi_test_hier_depth(int depth);

/* Makes this process's hierarchical allreduce cut the vector into `bytes`-byte segments instead
 * of the communicator leader's SDN_MPI_HIER_SEGMENT; 0 restores that. Unlike the depth it shapes
 * the messages, so every rank of a communicator must set it alike (the bench's variants do).
 * Returns 0. Not exported from the shared libraries. */
int sdnmpi_test_hier_segment(size_t bytes);

/* What the last SDN_MPI_Bcast of this process did: returns 0 no call yet, 1 PMPI_Bcast
 * (fallback), 2 multicast only, 3 multicast finished with PMPI_Bcast; *rounds multicast rounds,
 * *resent datagrams multicast again, *finished datagrams finished with PMPI_Bcast (any may be
 * NULL). Not exported from the shared libraries: link libsdnmpi.a. */
int sdnmpi_test_last_bcast(int *rounds, long long *resent, long long *finished);

/* What the last SDN_MPI_Allgather / SDN_MPI_Reduce / SDN_MPI_Alltoall of this process did: 0 no
 * call yet, 1 PMPI (fallback); allgather 2 recursive doubling, 3 ring, 4 two cycles; reduce 2
 * reduce-scatter + gather, 3 two chains; alltoall 2 pairwise exchange. */
int sdnmpi_test_last_allgather(void);
int sdnmpi_test_last_reduce(void);
int sdnmpi_test_last_alltoall(void);

/* The start-up and first-call phase times of this process (timing.h): up to cap names and values
 * (seconds, or counts for the *_rtts slots; -1 = not recorded); returns the number of slots. */
size_t sdnmpi_test_timings(const char **names, double *values, size_t cap);

/* 1 if this process's next SDN call on a communicator spanning MPI_COMM_WORLD runs the reconnect
 * agreement step (reconnect.h), 0 if not. */
int sdnmpi_test_agree_next(void);

/* Recursive doubling on comm's cached allreduce plan (its private communicator), without the
 * dispatcher, the reconnect point or the controller: the cached call's baseline. MPI_ERR_OTHER if
 * comm has no usable plan yet. Collective, like SDN_MPI_Allreduce. */
int sdnmpi_test_allreduce_direct(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/* The bench's floor (bench/README.md, "The floor"): a controller round trip on a connection of
 * its own (connect, then hello; the job's connection is not touched), times in seconds; 0, or -1
 * if it failed (SDN_MPI_CONTROLLER unset or unreachable). Not exported from the shared libraries. */
int sdnmpi_test_ctrl_hello(double *connect_s, double *hello_s);

/* The bytes of SDN_MPI_Init's agreement Bcast and of a plan's Allreduce (the floor sends as
 * many). */
void sdnmpi_test_wire_bytes(size_t *init_agreement, size_t *plan_outcome);

#endif
