/* alltoall_algorithms.h -- the SDN alltoall algorithm(s), as the dispatcher (alltoall.c) calls
 * them (allreduce_algorithms.h's shape: one call description, one function per algorithm and
 * translation unit; they know nothing of the dispatcher, the plan or the library's state).
 *
 * On call->comm (a plan's private communicator), contiguous bytes: the block for priv rank q is at
 * sendbuf + orig[q] x block, the block from priv rank q goes to recvbuf + orig[q] x block. sendbuf
 * and recvbuf do not overlap (the dispatcher copies for MPI_IN_PLACE). MPI error code. */
#ifndef SDNMPI_ALLTOALL_ALGORITHMS_H
#define SDNMPI_ALLTOALL_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

#include "alltoall_sched.h"

struct sdnmpi_alltoall_call {
    const void *sendbuf;
    void *recvbuf;
    size_t block;    /* bytes per rank pair, <= INT_MAX */
    MPI_Comm comm;
    const int *orig; /* sdnmpi_rank_map */
    const struct sdnmpi_alltoall_sched *sched; /* the steps, on call->comm's ranks */
    int window;      /* steps in flight at once (clamped to 1 .. p-1) */
    size_t segment;  /* bytes per message; 0 (or >= block): a block is one message; at most
                      * SDNMPI_ALLTOALL_MAX_MESSAGES per block. The same on every rank */
};

/* The most messages one block is cut into (SDN_MPI_ALLTOALL_SEGMENT). */
#define SDNMPI_ALLTOALL_MAX_MESSAGES 64

typedef int (*sdnmpi_alltoall_fn)(const struct sdnmpi_alltoall_call *call);

/* Pairwise exchange, p - 1 steps, each a permutation (call->sched, alltoall_sched.h): the steps
 * whose routes alltoall_plan.h asks the controller for; call->window of them in flight at once. */
int sdnmpi_alltoall_intra_pairwise(const struct sdnmpi_alltoall_call *call);

#endif
