/* sdnmpi_testing.h -- test-only hooks (libsdnmpi/tests). Not installed, not an API. */
#ifndef SDNMPI_TESTING_H
#define SDNMPI_TESTING_H

/* What the last SDN_MPI_Allreduce of this process did: 0 no call yet, 1 PMPI_Allreduce
 * (fallback), 2 recursive doubling, 3 Rabenseifner, 4 nothing (count 0), 5 hierarchical. */
int sdnmpi_test_last_path(void);

/* Makes this process's SDN_MPI_Allreduce use algorithm `path` (2 recursive doubling, 3
 * Rabenseifner, 5 hierarchical) whenever its preconditions hold, instead of the selection rule;
 * 0 restores the rule. For benchmarks and tests that compare the algorithms: every rank of a
 * communicator must force alike. Returns 0, or -1 for an unknown path. Not exported from the
 * shared libraries: link libsdnmpi.a. */
int sdnmpi_test_force_allreduce(int path);

/* What the last SDN_MPI_Bcast of this process did: returns 0 no call yet, 1 PMPI_Bcast
 * (fallback), 2 multicast only, 3 multicast finished with PMPI_Bcast; *rounds multicast rounds,
 * *resent datagrams multicast again, *finished datagrams finished with PMPI_Bcast (any may be
 * NULL). Not exported from the shared libraries: link libsdnmpi.a. */
int sdnmpi_test_last_bcast(int *rounds, long long *resent, long long *finished);

/* What the last SDN_MPI_Allgather / SDN_MPI_Reduce / SDN_MPI_Alltoall of this process did: 0 no
 * call yet, 1 PMPI (fallback); allgather 2 recursive doubling, 3 ring; reduce 2 reduce-scatter +
 * gather; alltoall 2 pairwise exchange. */
int sdnmpi_test_last_allgather(void);
int sdnmpi_test_last_reduce(void);
int sdnmpi_test_last_alltoall(void);

#endif
