/* reduce_algorithms.h -- the SDN reduce algorithm(s), as the dispatcher (reduce.c) calls them
 * (allreduce_algorithms.h's shape: one call description, one function per algorithm and
 * translation unit; they know nothing of the dispatcher, the plan or the library's state).
 *
 * On call->comm (a plan's private communicator), root = the root's rank there, a predefined
 * datatype (lower bound 0) and a predefined commutative op, count >= pof2 (the largest power of two
 * <= p); sendbuf may be MPI_IN_PLACE on the root; recvbuf is only touched on the root. MPI error
 * code (MPI_ERR_ARG if the call breaks the precondition). */
#ifndef SDNMPI_REDUCE_ALGORITHMS_H
#define SDNMPI_REDUCE_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

#include "segments.h"

struct sdnmpi_reduce_call {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Aint extent;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    const int *dist; /* the plan's halving order (plan.h rab_dist) */
    int ndims;
    const int *leaf_start; /* the plan's leaf layout (plan.h; NULL, 0: unknown) */
    int nleaves;
    size_t segment; /* the chain's segment bytes (SDN_MPI_REDUCE_SEGMENT; segments.h bounds them) */
};

typedef int (*sdnmpi_reduce_fn)(const struct sdnmpi_reduce_call *call);

/* Elements per segment of the chains for `count` elements of `extent` bytes and call->segment
 * bytes: segments.h's rounding of the larger half, at most SDNMPI_MAX_SEGMENTS a chain. */
static inline size_t sdnmpi_reduce_segment_elems(size_t count, size_t extent, size_t segment)
{
    return sdnmpi_segment_elems(count - count / 2, extent, segment, SDNMPI_MAX_SEGMENTS);
}

/* Reduce-scatter by recursive halving, then a binomial gather of the reduced blocks to the root,
 * both over the pairs of recursive doubling (the allreduce plan's routes). */
int sdnmpi_reduce_intra_redscat_gather(const struct sdnmpi_reduce_call *call);

/* Two pipelined chains, one per half of the vector, along the cycles of cycles.h cut
 * open at the root (their routes: the plan's reduce steps). Any p >= 2, count >= 2. */
int sdnmpi_reduce_intra_chain(const struct sdnmpi_reduce_call *call);

#endif
