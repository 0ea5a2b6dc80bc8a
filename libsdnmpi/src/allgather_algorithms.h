/* allgather_algorithms.h -- the SDN allgather algorithms, as the dispatcher (allgather.c) calls
 * them: one call description, one function per algorithm (one per translation unit), the same
 * signature for all (allreduce_algorithms.h's shape). They know nothing of the dispatcher, the
 * plan or the library's state.
 *
 * Every algorithm runs on call->comm (a plan's private communicator) on contiguous bytes: the
 * block of priv rank q goes to recvbuf + orig[q] x block. sendblock (this rank's block) may point
 * into recvbuf (MPI_IN_PLACE). Every rank ends with every block. MPI error code (MPI_ERR_ARG if the
 * call breaks the algorithm's precondition). */
#ifndef SDNMPI_ALLGATHER_ALGORITHMS_H
#define SDNMPI_ALLGATHER_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

struct sdnmpi_allgather_call {
    const void *sendblock;
    void *recvbuf;
    size_t block;     /* bytes per rank; p x block <= INT_MAX */
    MPI_Comm comm;
    const int *orig;  /* sdnmpi_rank_map */
    /* The plan's distances (plan.h rab_dist: the step that the controller's loads make cheapest
     * first); recursive doubling runs them in reverse, so the cheapest step moves the most. */
    const int *dist;
    int ndims;
    const int *leaf_start; /* the plan's leaf layout (plan.h; NULL, 0: unknown), for the cycles */
    int nleaves;
};

typedef int (*sdnmpi_allgather_fn)(const struct sdnmpi_allgather_call *call);

/* Recursive doubling over the plan's pairs (rank ^ d, routed by the allreduce plan); p must be a
 * power of two and ndims == log2 p. */
int sdnmpi_allgather_intra_rd(const struct sdnmpi_allgather_call *call);

/* Ring: p - 1 steps, each rank sends to the next rank of the private communicator (ordered leaf
 * by leaf, so one flow per step leaves and enters each leaf: no link is shared). Any p. */
int sdnmpi_allgather_intra_ring(const struct sdnmpi_allgather_call *call);

/* Two rings at once, one per half of every block, along the two cycles of cycles.h over the
 * plan's leaf layout (their routes: sdnmpi_cycles_routed): (p-1) blocks in and out per rank, and
 * each leaf's traffic out and in on two flows. Any p >= 2. */
int sdnmpi_allgather_intra_cycles(const struct sdnmpi_allgather_call *call);

#endif
