/* allgather_util.h -- what the data-movement collectives' dispatchers (allgather.c, alltoall.c)
 * and algorithms share: the rank map of a plan's private communicator and the byte view of the
 * user's buffers. Below the algorithms, never calling them. */
#ifndef SDNMPI_ALLGATHER_UTIL_H
#define SDNMPI_ALLGATHER_UTIL_H

#include <mpi.h>
#include <stdint.h>

/* *orig (p entries, malloc'd; free it) maps the ranks of `priv` (a plan's private communicator,
 * the same group as comm in the leader's order, plan.h) to the ranks of `comm`: the block of
 * priv rank q lives at block orig[q] of the user's buffers. MPI error code; *orig is NULL on
 * MPI_ERR_NO_MEM. */
int sdnmpi_rank_map(MPI_Comm comm, MPI_Comm priv, int p, int **orig);

/* Whether `count` elements of `datatype` are count x size contiguous bytes at the buffer (lower
 * bound and true lower bound 0, extent and true extent equal to the size). *bytes gets count x
 * size. 0 also if an MPI query failed (*rc says so). */
int sdnmpi_bytes_view(MPI_Datatype datatype, int count, uint64_t *bytes, int *rc);

#endif
