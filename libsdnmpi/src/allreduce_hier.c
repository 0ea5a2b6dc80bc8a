/* allreduce_hier.c -- hierarchical, leaf-aware allreduce, pipelined in segments.
 *
 * The ranks of call->comm sit leaf by leaf (the plan orders them so; call->leaf_start). Each
 * segment of the vector goes through the steps of hier_layout.h: reduce-scatter inside the leaf
 * (a ring over the host links), reduce-scatter across the leaves of each rank's chunk by recursive
 * halving (with k ranks per leaf, k a power of two, these are the recursive-doubling pairs at
 * distance d*k, whose routes the controller balanced; other layouts' cross-leaf pairs are planned
 * too, plan.c), the allgather of that in reverse, and the allgather inside the leaf. Leaves with
 * more ranks than the smallest one fold their extra ranks into its lanes first, and the leaves
 * beyond the largest power of two fold into the first ones.
 * Pipelining: the vector is cut into segments of about call->segment bytes, at most
 * SDNMPI_MAX_SEGMENTS of them (sdnmpi_hier_segments), which flow through the steps independently
 * (dataflow: a segment's next step is posted as soon as its current one has completed and been
 * reduced; MPI_Waitsome). A new segment starts while fewer than call->depth segments are in their
 * first step, at most depth x (number of steps) in flight, so the host-link stages of some
 * segments overlap the fabric stages of others. Each element is
 * reduced on exactly one rank (its lane owner) in a fixed order and then only copied, so every
 * rank's result is bit-identical.
 */
#include <stdint.h>
#include <stdlib.h>

#include "allreduce_algorithms.h"
#include "allreduce_hier_trace.h"
#include "allreduce_util.h"
#include "hier_layout.h"
#include "segments.h"

/* Tags of the pipeline's messages: one per segment (mod 4096), apart from SDNMPI_TAG. */
#define HIER_TAG_BASE 0x2000
#define HIER_TAG_MASK 0xfff

struct hier {
    struct sdnmpi_hier_layout lay;
    int rank;
    int count, nseg, segcount;
    int depth; /* segments in step 0 at once at most */
    struct sdnmpi_hier_trace *trace;
};

int sdnmpi_allreduce_hier_fits(int p, const int *leaf_start, int nleaves)
{
    struct sdnmpi_hier_layout lay;
    return sdnmpi_hier_layout_init(&lay, leaf_start, nleaves) && lay.p == p;
}

size_t sdnmpi_hier_segment_bytes(const int *leaf_start, int nleaves)
{
    int most = 0;
    for (int g = 0; leaf_start && g < nleaves; g++)
        if (leaf_start[g + 1] - leaf_start[g] > most)
            most = leaf_start[g + 1] - leaf_start[g];
    size_t seg = (size_t)most * SDNMPI_HIER_SEGMENT_PER_RANK;
    return seg > SDNMPI_HIER_SEGMENT_MIN ? seg : SDNMPI_HIER_SEGMENT_MIN;
}

int sdnmpi_hier_segments(int count, MPI_Aint extent, size_t segment, int *segcount)
{
    /* 0: one segment, as "unlimited" (no wrap to 0 segments: sdnmpi_segment_elems caps at count) */
    size_t elems = sdnmpi_segment_elems((size_t)count, (size_t)extent, segment ? segment : SIZE_MAX,
                                        SDNMPI_MAX_SEGMENTS);
    int nseg = (int)(((size_t)count + elems - 1) / elems);
    *segcount = (count + nseg - 1) / nseg; /* even segments; the last may be shorter */
    return (count + *segcount - 1) / *segcount;
}

/* A segment in flight: its current step, posted as two requests. */
struct slot {
    int seg, step; /* seg -1: a free slot */
    struct sdnmpi_hier_step st;
};

/* Posts x's current step (Irecv, Isend) into r[0], r[1]. */
static int post(const struct hier *h, struct slot *x, MPI_Request *r, char *buf, char *scratch,
                MPI_Aint extent, MPI_Datatype datatype, MPI_Comm comm)
{
    int seg0 = x->seg * h->segcount;
    int segn = (x->seg == h->nseg - 1 ? h->count : seg0 + h->segcount) - seg0;
    sdnmpi_hier_step(&h->lay, h->rank, seg0, segn, x->step, &x->st);
    int tag = HIER_TAG_BASE + (x->seg & HIER_TAG_MASK);
    char *into = x->st.reduce ? scratch : buf;
    sdnmpi_hier_trace_post(h->trace, x->seg, x->step, x->st.send_n, x->st.recv_n, x->st.send_to,
                           x->st.recv_from);
    int rc = PMPI_Irecv(into + (size_t)x->st.recv_off * (size_t)extent, x->st.recv_n, datatype,
                        x->st.recv_from, tag, comm, &r[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(buf + (size_t)x->st.send_off * (size_t)extent, x->st.send_n, datatype,
                        x->st.send_to, tag, comm, &r[1]);
    return rc;
}

/* Starts next segments in free slots while fewer than h->depth segments are in their first step. */
static int admit(const struct hier *h, struct slot *sl, MPI_Request *req, char *buf,
                 char *scratch, MPI_Aint extent, MPI_Datatype datatype, MPI_Comm comm, int window,
                 int *next, int *active)
{
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && *next < h->nseg) {
        int first = 0, free_w = -1, oldest = *next;
        for (int w = 0; w < window; w++) {
            if (sl[w].seg < 0) {
                free_w = free_w < 0 ? w : free_w;
                continue;
            }
            first += sl[w].step == 0;
            oldest = sl[w].seg < oldest ? sl[w].seg : oldest;
        }
        /* A segment's tag is its number mod HIER_TAG_MASK + 1: never two in flight with one tag. */
        if (first >= h->depth || free_w < 0 || *next - oldest > HIER_TAG_MASK)
            break;
        sl[free_w].seg = (*next)++;
        sl[free_w].step = 0;
        (*active)++;
        rc = post(h, &sl[free_w], &req[2 * free_w], buf, scratch, extent, datatype, comm);
    }
    return rc;
}

int sdnmpi_allreduce_intra_hier(const struct sdnmpi_allreduce_call *call)
{
    int count = call->count;
    MPI_Datatype datatype = call->datatype;
    MPI_Aint extent = call->extent;
    MPI_Comm comm = call->comm;
    char *buf = call->recvbuf;
    int rank, p, rc;
    size_t bytes = (size_t)count * (size_t)extent;
    if ((rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    struct hier h = {.count = count};
    if (!sdnmpi_hier_layout_init(&h.lay, call->leaf_start, call->nleaves) || h.lay.p != p)
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    if ((rc = sdnmpi_allreduce_begin(call->sendbuf, buf, bytes, comm, &rank, &p)) != MPI_SUCCESS)
        return rc;
    h.rank = rank;
    h.nseg = sdnmpi_hier_segments(count, extent, call->segment, &h.segcount);
    int nsteps = h.lay.nsteps;
    h.depth = call->depth > 0 ? call->depth : SDNMPI_HIER_DEFAULT_DEPTH;
    int window = h.depth * nsteps < h.nseg ? h.depth * nsteps : h.nseg; /* in flight at most */

    char *scratch = sdnmpi_scratch(bytes, comm);
    MPI_Request *req = sdnmpi_scratch((size_t)window * 2 * sizeof *req, comm);
    int *idx = sdnmpi_scratch((size_t)window * 2 * sizeof *idx, comm);
    struct slot *sl = sdnmpi_scratch((size_t)window * sizeof *sl, comm);
    for (int w = 0; w < 2 * window; w++)
        req[w] = MPI_REQUEST_NULL;
    for (int w = 0; w < window; w++)
        sl[w].seg = -1;
    int next = 0, active = 0;
    h.trace = sdnmpi_hier_trace_begin(call->trace, h.nseg, nsteps);
    /* The first depth segments start at once; each next one when one of them has finished its
     * first step, so that the segments stagger along the stages instead of moving in a block. */
    rc = admit(&h, sl, req, buf, scratch, extent, datatype, comm, window, &next, &active);
    while (rc == MPI_SUCCESS && active > 0) {
        int done = 0;
        rc = PMPI_Waitsome(2 * window, req, &done, idx, MPI_STATUSES_IGNORE);
        for (int w = 0; rc == MPI_SUCCESS && w < window; w++) {
            struct slot *x = &sl[w];
            if (x->seg < 0 || req[2 * w] != MPI_REQUEST_NULL || req[2 * w + 1] != MPI_REQUEST_NULL)
                continue;
            sdnmpi_hier_trace_done(h.trace, x->seg, x->step);
            if (x->st.reduce && x->st.recv_n > 0)
                rc = PMPI_Reduce_local(scratch + (size_t)x->st.recv_off * (size_t)extent,
                                       buf + (size_t)x->st.recv_off * (size_t)extent, x->st.recv_n,
                                       datatype, call->op);
            if (rc != MPI_SUCCESS)
                break;
            if (++x->step == nsteps) {
                x->seg = -1;
                active--;
            } else {
                rc = post(&h, x, &req[2 * w], buf, scratch, extent, datatype, comm);
            }
        }
        if (rc == MPI_SUCCESS)
            rc = admit(&h, sl, req, buf, scratch, extent, datatype, comm, window, &next, &active);
    }
    if (rc != MPI_SUCCESS) /* complete what was posted, so no request outlives the buffers */
        (void)PMPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE);
    sdnmpi_hier_trace_end(h.trace, rank, p, h.lay.nleaves, h.lay.m, count, (long)extent, h.depth);
    free(idx);
    free(req);
    free(sl);
    free(scratch);
    return rc;
}
