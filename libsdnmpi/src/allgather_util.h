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

/* The checks SDN_MPI_Allgather and SDN_MPI_Alltoall share before any plan (all on inputs that are
 * the same on every rank of a valid call): NULL if the SDN path may go on, else why not (an
 * invalid argument, which PMPI then reports, an intercommunicator, p = 1, an empty message, more
 * than INT_MAX bytes, outside the size knobs). *rc is an MPI error code if an MPI query failed
 * (then the reason is "MPI error"). *p = comm's size, *block = bytes per rank, *total = p x block,
 * *recv_ok = whether the receive side is contiguous bytes. */
const char *sdnmpi_blocks_check(int in_place, int sendcount, MPI_Datatype sendtype, int recvcount,
                                MPI_Datatype recvtype, MPI_Comm comm, int *p, uint64_t *block,
                                uint64_t *total, int *recv_ok, int *rc);

/* This rank's side of the per-call agreement: the receive side is contiguous (recv_ok) and, unless
 * in place, so is the send side, with the same byte count. *rc as above. */
int sdnmpi_blocks_local_ok(int in_place, int sendcount, MPI_Datatype sendtype, uint64_t block,
                           int recv_ok, int *rc);

#endif
