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

/* Smallest message (bytes: Allgather's and Alltoall's whole receive buffer, Reduce's vector) that
 * SDN_MPI_Allgather, SDN_MPI_Alltoall and SDN_MPI_Reduce take off PMPI: SDN_MPI_MIN_BYTES when it
 * is set (> 0), else SDNMPI_COLL_DEFAULT_MIN_BYTES. Small calls are latency-bound, where the per-call
 * agreement (Allgather, Alltoall), the ring's p - 1 steps and Reduce's 2 log2 p steps cannot win
 * over Open MPI's latency-optimised algorithms (measured for Alltoall: at 64 KiB it won on the
 * bench fabric, libsdnmpi/README.md; not below, nor for the other two). Agreed
 * at SDN_MPI_Init (the knob is world rank 0's). */
#define SDNMPI_COLL_DEFAULT_MIN_BYTES 65536
uint64_t sdnmpi_coll_min_bytes(void);

/* One call of SDN_MPI_Allgather or SDN_MPI_Alltoall: both have MPI_Allgather's signature. */
struct sdnmpi_blocks_args {
    const void *sendbuf;
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    MPI_Datatype recvtype;
    MPI_Comm comm;
};

/* PMPI_Allgather or PMPI_Alltoall. */
typedef int (*sdnmpi_blocks_pmpi_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                     MPI_Comm);

/* The checks SDN_MPI_Allgather and SDN_MPI_Alltoall share before any plan (all on inputs that are
 * the same on every rank of a valid call): NULL if the SDN path may go on, else why not (the
 * library's state, sdnmpi_state_unavailable; an invalid argument, which PMPI then reports; an
 * intercommunicator, p = 1, an empty message, more than INT_MAX bytes, below
 * sdnmpi_coll_min_bytes, above SDN_MPI_MAX_BYTES). *rc is an MPI error code if an MPI query failed
 * (then the reason is "MPI error"). *p = comm's size, *block = bytes per rank, *total = p x block,
 * *recv_ok = whether the receive side is contiguous bytes. */
const char *sdnmpi_blocks_check(const struct sdnmpi_blocks_args *a, int *p, uint64_t *block,
                                uint64_t *total, int *recv_ok, int *rc);

/* One of the two collectives: its name in log lines, its PMPI function, and where it records its
 * last path (1 = PMPI) for sdnmpi_testing.h. */
struct sdnmpi_blocks_coll {
    const char *name;
    const char *pmpi_name;
    sdnmpi_blocks_pmpi_fn pmpi;
    int *last_path;
};

/* The call `a` handed to c's PMPI function, logged with `why` while the library is up. */
int sdnmpi_blocks_fallback(const struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                           const char *why);

/* The start of both dispatchers: sdnmpi_blocks_check, then the fallback if it says why not.
 * 1 if the call is over (*rc: an MPI error of a query, or what PMPI returned), 0 if the SDN path
 * may go on (the outputs as for sdnmpi_blocks_check). */
int sdnmpi_blocks_enter(const struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        int *p, uint64_t *block, uint64_t *total, int *recv_ok, int *rc);

/* This rank's side of the per-call agreement: the receive side is contiguous (recv_ok) and, unless
 * in place, so is the send side, with the same byte count. *rc as above. */
int sdnmpi_blocks_local_ok(int in_place, int sendcount, MPI_Datatype sendtype, uint64_t block,
                           int recv_ok, int *rc);

#endif
