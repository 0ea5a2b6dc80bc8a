/* allgather_util.h -- what the data-movement collectives' dispatchers (allgather.c, alltoall.c)
 * and algorithms share: the rank map of a plan's private communicator and the byte view of the
 * user's buffers. Below the algorithms, never calling them. */
#ifndef SDNMPI_ALLGATHER_UTIL_H
#define SDNMPI_ALLGATHER_UTIL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"

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
 * is set (0 included), else SDNMPI_COLL_DEFAULT_MIN_BYTES (sdnmpi_cfg_min_bytes, env.h). Small
 * calls are latency-bound, where the per-call agreement (Allgather, Alltoall), the ring's p - 1
 * steps and Reduce's 2 log2 p steps cannot win over Open MPI's latency-optimised algorithms
 * (measured for Alltoall: at 64 KiB it won on the bench fabric, libsdnmpi/README.md; not below,
 * nor for the other two). Agreed at SDN_MPI_Init (the knob is world rank 0's). */
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

/* One of the two collectives: its name in log lines, its PMPI function, and its last path (1 =
 * PMPI, set by sdnmpi_blocks_fallback; the others by the dispatcher) for sdnmpi_testing.h. */
struct sdnmpi_blocks_coll {
    const char *name;
    const char *pmpi_name;
    sdnmpi_blocks_pmpi_fn pmpi;
    int last_path;
};

/* What sdnmpi_blocks_enter and sdnmpi_blocks_agree found out about a call that takes the SDN
 * path (the same on every rank of a valid call, except the agreement's inputs). */
struct sdnmpi_blocks_view {
    int p;          /* comm's size */
    int recv_ok;    /* this rank's receive side is contiguous bytes */
    uint64_t block; /* bytes per rank */
    uint64_t total; /* p x block */
    const struct sdnmpi_plan *plan; /* comm's allreduce plan (plan.h), ok */
    int *orig;      /* sdnmpi_rank_map of comm and plan->priv (after the agreement; free it) */
    void *copy;     /* the agreement's scratch copy of the input, or NULL (free it) */
};

/* The call `a` handed to c's PMPI function, logged with `why` while the library is up. */
int sdnmpi_blocks_fallback(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                           const char *why);

/* The start of both dispatchers, on inputs that are the same on every rank of a valid call: the
 * checks (the library's state, sdnmpi_state_unavailable; an invalid argument, which PMPI then
 * reports; an intercommunicator, p = 1, an empty message, more than INT_MAX bytes, below
 * sdnmpi_coll_min_bytes, above SDN_MPI_MAX_BYTES), then the allreduce plan of a->comm (made by the
 * first call, collective: plan.h), then the fallback if any of them says why not (a plan without
 * routes). 1 if the call is over (*rc: an MPI error of a query or of the plan, or what PMPI
 * returned), 0 if the SDN path may go on (*v filled but for orig and copy). */
int sdnmpi_blocks_enter(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        struct sdnmpi_blocks_view *v, int *rc);

/* The per-call agreement, after sdnmpi_blocks_enter (collective over v->plan->priv, one
 * PMPI_Allreduce), since MPI lets the datatypes' layouts differ between ranks: this rank's
 * receive side is contiguous bytes and, unless in place, so is its send side, with the same byte
 * count; its rank map (v->orig) was made; and, if `scratch` > 0, a malloc'd copy of the first
 * `scratch` bytes of a->recvbuf (v->copy: an MPI_IN_PLACE input, saved before any data moves)
 * too. 0 if every rank may go on (v->orig and v->copy are the caller's to free); 1 if the call is
 * over (*rc: an MPI error, or what c's PMPI function returned when some rank could not go on;
 * nothing to free). */
int sdnmpi_blocks_agree(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        struct sdnmpi_blocks_view *v, size_t scratch, int *rc);

#endif
