/* allreduce_algorithms.h -- the SDN allreduce algorithms, as the dispatcher (allreduce.c) calls them: one
 * call description, one function per algorithm (one algorithm per translation unit), the same
 * signature for all. The algorithms know nothing of the dispatcher, the plan or the library's
 * state, and call neither back nor each other; what they share is allreduce_util.h.
 *
 * Every algorithm runs on call->comm (a plan's private communicator) for a predefined datatype
 * (lower bound 0, so element i is at byte i * extent) and a predefined commutative op, with
 * count > 0; sendbuf may be MPI_IN_PLACE. Every rank ends up with bit-identical data. Returns an
 * MPI error code (MPI_ERR_ARG if the call breaks the algorithm's precondition). */
#ifndef SDNMPI_ALLREDUCE_ALGORITHMS_H
#define SDNMPI_ALLREDUCE_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

struct sdnmpi_allreduce_call {
    const void *sendbuf;
    void *recvbuf;
    int count;
    MPI_Datatype datatype;
    MPI_Aint extent;
    MPI_Op op;
    MPI_Comm comm;
    /* Rabenseifner's halving distances dist[0..ndims), in that order: a permutation of 1, 2, ...,
     * pof2/2 (pof2 the largest power of two <= p; sdnmpi_rab_order). Unused by the others. */
    const int *dist;
    int ndims;
    /* The hierarchical algorithm's leaf layout: leaf g holds ranks leaf_start[g] ..
     * leaf_start[g+1]-1 (nleaves + 1 entries, the plan's), and its pipeline segment in bytes (0:
     * one segment). Unused by the others. */
    const int *leaf_start;
    int nleaves;
    size_t segment;
    int depth;         /* segments in the pipeline's first step at once (0: SDNMPI_HIER_DEFAULT_DEPTH) */
    const char *trace; /* SDN_MPI_HIER_TRACE's directory, or NULL (allreduce_hier_trace.h) */
};

typedef int (*sdnmpi_allreduce_fn)(const struct sdnmpi_allreduce_call *call);

/* Recursive doubling over schedule.h's pairs. */
int sdnmpi_allreduce_intra_rd(const struct sdnmpi_allreduce_call *call);

/* Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling, over the
 * same pairs, at call->dist. Needs count >= pof2 and ndims == log2(pof2)
 * (sdnmpi_allreduce_rab_fits). */
int sdnmpi_allreduce_intra_rabenseifner(const struct sdnmpi_allreduce_call *call);

/* Hierarchical, leaf-aware (allreduce_hier.c): reduce-scatter inside each leaf, reduce-scatter +
 * allgather across the leaves on each rank's chunk, allgather inside the leaf, pipelined in
 * segments of call->segment bytes; any leaf layout (hier_layout.h). Needs
 * sdnmpi_allreduce_hier_fits. */
int sdnmpi_allreduce_intra_hier(const struct sdnmpi_allreduce_call *call);

/* Its pipeline's depth when call->depth is 0: segments in the first step at once (at most depth x
 * steps in flight). At 1 the pipeline was window-bound under load; 4 was never slower on the bench
 * fabric and 1.09-1.25x faster under load, at 8 and 16 hosts, and within 3 % of the best depth
 * (2-16) at both on a quiet machine, so one value for every layout (docs/bench-notebook.md, "Where
 * the 16-host time goes"). */
#define SDNMPI_HIER_DEFAULT_DEPTH 4

/* Its segment when SDN_MPI_HIER_SEGMENT is unset: SDNMPI_HIER_SEGMENT_PER_RANK bytes per rank of
 * the largest leaf, at least SDNMPI_HIER_SEGMENT_MIN, so that the ring steps inside a leaf move
 * 4 KiB messages whatever the leaf's size: 8 KiB up to 2 ranks a leaf (the best of 8-64 KiB at 8
 * hosts), 16 KiB at 4 (16 hosts on 4 leaves: 1.14-1.24x faster than 8 KiB at 256 KiB, in the same
 * jobs; docs/bench-notebook.md, "The pipeline's segment"). Every input is the plan's: the same on all
 * ranks. */
#define SDNMPI_HIER_SEGMENT_PER_RANK 4096
#define SDNMPI_HIER_SEGMENT_MIN 8192
size_t sdnmpi_hier_segment_bytes(const int *leaf_start, int nleaves);

/* Its segments for `count` > 0 elements of `extent` bytes and `segment` bytes (call->segment: 0
 * is one segment): the number, at most SDNMPI_MAX_SEGMENTS (segments.h: a smaller segment is
 * raised to the vector / that), and in *segcount the elements of each but the last (even
 * segments; the last may be shorter). */
int sdnmpi_hier_segments(int count, MPI_Aint extent, size_t segment, int *segcount);

/* Whether the hierarchical algorithm's preconditions hold: nleaves >= 2 non-empty leaves at
 * leaf_start (which may be NULL: no layout) holding the p ranks. */
int sdnmpi_allreduce_hier_fits(int p, const int *leaf_start, int nleaves);

/* Whether Rabenseifner's preconditions hold for p ranks, count elements and ndims distances. */
int sdnmpi_allreduce_rab_fits(int p, int count, int ndims);

#endif
