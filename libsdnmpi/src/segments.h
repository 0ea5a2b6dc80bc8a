/* segments.h -- how a pipelined algorithm cuts a vector into segments: Reduce's chains
 * (reduce_chain.c, each half), the hierarchical allreduce (allreduce_hier.c, the vector) and
 * Alltoall's messages (alltoall_pairwise.c, each block, in bytes). The knobs' 0 keeps each its own
 * meaning (libsdnmpi/README.md): the callers pass a segment, this only rounds and bounds it. */
#ifndef SDNMPI_SEGMENTS_H
#define SDNMPI_SEGMENTS_H

#include <stddef.h>

/* The most segments Reduce's chains cut a half into and the hierarchical allreduce cuts its vector
 * into: a smaller segment (SDN_MPI_REDUCE_SEGMENT=0 or 1, SDN_MPI_HIER_SEGMENT=1: one element) is
 * raised to the vector / this, so that no call posts a message per element (a 1 MiB Reduce in
 * one-element segments took 25 s on 4 local ranks, in 8 KiB ones 9 ms; allreduce_check's
 * hierarchical calls under SDN_MPI_HIER_SEGMENT=1 did not finish in 150 s). The default segments
 * (8 KiB, the hierarchical one at least 8 KiB) reach it only above 8 MiB vectors (Reduce: 16 MiB),
 * beyond the bench's largest (4 MiB). */
#define SDNMPI_MAX_SEGMENTS 1024

/* Elements per segment for `count` elements of `extent` bytes cut into segments of `segment`
 * bytes: at least one, at least count / most (rounded up: at most `most` segments), at most count
 * (one segment; and no wrap where the caller rounds up). */
static inline size_t sdnmpi_segment_elems(size_t count, size_t extent, size_t segment, size_t most)
{
    size_t least = (count + most - 1) / most;
    size_t elems = extent > 0 ? segment / extent : 1;
    elems = elems < least ? least : elems;
    elems = elems < 1 ? 1 : elems;
    return count > 0 && elems > count ? count : elems;
}

#endif
