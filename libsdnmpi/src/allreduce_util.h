/* allreduce_util.h -- what the allreduce algorithms (allreduce_rd.c, allreduce_rabenseifner.c)
 * share; below them, never calling them (Open MPI's coll_base_util shape). */
#ifndef SDNMPI_ALLREDUCE_UTIL_H
#define SDNMPI_ALLREDUCE_UTIL_H

#include <mpi.h>
#include <stddef.h>

/* Tag of the algorithms' messages on the private communicator. */
#define SDNMPI_TAG 0x5d4

/* An algorithm's start: *rank and *p of comm, and the input (bytes of it) copied to recvbuf
 * unless sendbuf is MPI_IN_PLACE. MPI error code. */
int sdnmpi_allreduce_begin(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm comm,
                           int *rank, int *p);

/* A scratch buffer of `bytes` (> 0). Aborts the job if memory is exhausted: one rank cannot
 * leave a collective its partners are already in, so there is no clean way back. */
void *sdnmpi_scratch(size_t bytes, MPI_Comm comm);

#endif
