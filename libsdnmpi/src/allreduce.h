/* allreduce.h -- the SDN allreduce algorithms. Both run on a plan's private communicator, for a
 * predefined datatype (lower bound 0, so element i is at byte i * extent) and a predefined
 * commutative op, with count > 0; sendbuf may be MPI_IN_PLACE. Every rank ends up with
 * bit-identical data. MPI error code. */
#ifndef SDNMPI_ALLREDUCE_H
#define SDNMPI_ALLREDUCE_H

#include <mpi.h>
#include <stddef.h>

/* Recursive doubling over schedule.h's pairs. */
int sdnmpi_allreduce_rd(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Aint extent, MPI_Op op, MPI_Comm comm);

/* Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling, over the
 * same pairs, the halving at the distances dist[0..ndims) in that order (a permutation of 1, 2,
 * ..., pof2/2, pof2 the largest power of two <= p: sdnmpi_rab_order). Needs count >= pof2. */
int sdnmpi_allreduce_rabenseifner(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Aint extent, MPI_Op op,
                                  MPI_Comm comm, const int *dist, int ndims);

/* Both algorithms' start: *rank and *p of comm, and the input (bytes of it) copied to recvbuf
 * unless sendbuf is MPI_IN_PLACE. MPI error code. */
int sdnmpi_allreduce_begin(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm comm,
                           int *rank, int *p);

/* A scratch buffer of `bytes` (> 0). Aborts the job if memory is exhausted: one rank cannot
 * leave a collective its partners are already in, so there is no clean way back. */
void *sdnmpi_scratch(size_t bytes, MPI_Comm comm);

/* Tag of the algorithms' messages on the private communicator. */
#define SDNMPI_TAG 0x5d4

#endif
