/* allreduce_hier.c -- hierarchical, leaf-aware allreduce, pipelined in segments.
 *
 * The ranks of call->comm sit leaf by leaf: leaf g holds ranks g*k .. g*k+k-1 (k = leaf_size,
 * L = nleaves a power of two; the plan orders the ranks so). Each segment of the vector goes
 * through four stages:
 *   1. reduce-scatter inside the leaf (a ring over the host links: k-1 steps, each moving 1/k of
 *      the segment): local rank j ends up owning the leaf's sum of chunk j;
 *   2. reduce-scatter across the leaves of chunk j among the L "lane" ranks g*k+j, by recursive
 *      halving at leaf distance 1, 2, 4, ... (partner leaf g ^ d: with k a power of two these
 *      are the recursive-doubling pairs at distance d*k, whose routes the controller balanced);
 *   3. the allgather of stage 2 in reverse;
 *   4. the allgather inside the leaf (the ring again).
 * Pipelining: the vector is cut into segments of about call->segment bytes, which flow through
 * the steps independently (dataflow: a segment's next step is posted as soon as its current one
 * has completed and been reduced; MPI_Waitsome). A new segment starts when the previous one has
 * left its first step, at most (number of steps) segments in flight, so the host-link stages of
 * some segments overlap the fabric stages of others. Each element is reduced on exactly one rank
 * (its lane owner) in a fixed order and then only copied, so every rank's result is bit-identical.
 */
#include <stdlib.h>

#include "allreduce_algorithms.h"
#include "allreduce_util.h"

/* Tags of the pipeline's messages: one per segment (mod 4096), apart from SDNMPI_TAG. */
#define HIER_TAG_BASE 0x2000
#define HIER_TAG_MASK 0xfff

struct hier {
    int k, nleaves, ldims; /* ranks per leaf, leaves, log2(leaves) */
    int g, j;              /* my leaf and my index in it */
    int count, nseg, segcount;
};

struct step {
    int send_to, recv_from;
    int send_off, send_n; /* elements of the whole vector */
    int recv_off, recv_n;
    int reduce;           /* received data is reduced into the vector (else copied) */
};

/* First element of part b of n elements cut into nparts (sizes differ by at most one). */
static int part_start(int n, int nparts, int b)
{
    int q = n / nparts, r = n % nparts;
    return b * q + (b < r ? b : r);
}

int sdnmpi_allreduce_hier_fits(int p, int leaf_size, int nleaves)
{
    return leaf_size >= 2 && nleaves >= 2 && (nleaves & (nleaves - 1)) == 0
           && (long long)leaf_size * nleaves == p;
}

/* Block range [*lo, *hi) of the lane after `halvings` halvings (leaf distance 1, 2, ...). */
static void lane_range(const struct hier *h, int halvings, int *lo, int *hi)
{
    *lo = 0;
    *hi = h->nleaves;
    for (int t = 0; t < halvings; t++) {
        int mid = *lo + (*hi - *lo) / 2;
        if (h->g & (1 << t))
            *lo = mid;
        else
            *hi = mid;
    }
}

/* Step i (0-based) of segment s. */
static void step_of(const struct hier *h, int s, int i, struct step *st)
{
    int k = h->k, j = h->j, g = h->g;
    int seg0 = s * h->segcount;
    int segn = (s == h->nseg - 1 ? h->count : seg0 + h->segcount) - seg0;
#define CHUNK0(c) (seg0 + part_start(segn, k, (c)))
#define CHUNKN(c) (part_start(segn, k, (c) + 1) - part_start(segn, k, (c)))
    if (i < k - 1 || i >= k - 1 + 2 * h->ldims) { /* inside the leaf: a ring */
        int ag = i >= k - 1;
        int r = ag ? i - (k - 1 + 2 * h->ldims) : i;
        int send_c = ag ? (j - r + k) % k : (j - r - 1 + 2 * k) % k;
        int recv_c = ag ? (j - r - 1 + 2 * k) % k : (j - r - 2 + 2 * k) % k;
        st->send_to = g * k + (j + 1) % k;
        st->recv_from = g * k + (j - 1 + k) % k;
        st->send_off = CHUNK0(send_c);
        st->send_n = CHUNKN(send_c);
        st->recv_off = CHUNK0(recv_c);
        st->recv_n = CHUNKN(recv_c);
        st->reduce = !ag;
        return;
    }
    /* across the leaves, within chunk j */
    int c0 = CHUNK0(j), cn = CHUNKN(j);
#undef CHUNK0
#undef CHUNKN
    int t = i - (k - 1);
    int rs = t < h->ldims;
    int level = rs ? t : 2 * h->ldims - 1 - t; /* the halving this step does or undoes */
    int d = 1 << level;
    int lo, hi, plo, phi;
    lane_range(h, level + 1, &lo, &hi);  /* mine after this halving */
    lane_range(h, level, &plo, &phi);    /* the range it split */
    int olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo; /* the partner's half */
    int peer = (g ^ d) * k + j;
    st->send_to = st->recv_from = peer;
    /* reduce-scatter: give the partner's half, take mine; allgather: the reverse */
    int send_lo = rs ? olo : lo, send_hi = rs ? ohi : hi;
    int recv_lo = rs ? lo : olo, recv_hi = rs ? hi : ohi;
    st->send_off = c0 + part_start(cn, h->nleaves, send_lo);
    st->send_n = part_start(cn, h->nleaves, send_hi) - part_start(cn, h->nleaves, send_lo);
    st->recv_off = c0 + part_start(cn, h->nleaves, recv_lo);
    st->recv_n = part_start(cn, h->nleaves, recv_hi) - part_start(cn, h->nleaves, recv_lo);
    st->reduce = rs;
}

/* A segment in flight: its current step, posted as two requests. */
struct slot {
    int seg, step; /* seg -1: a free slot */
    struct step st;
};

/* Posts x's current step (Irecv, Isend) into r[0], r[1]. */
static int post(const struct hier *h, struct slot *x, MPI_Request *r, char *buf, char *scratch,
                MPI_Aint extent, MPI_Datatype datatype, MPI_Comm comm)
{
    step_of(h, x->seg, x->step, &x->st);
    int tag = HIER_TAG_BASE + (x->seg & HIER_TAG_MASK);
    char *into = x->st.reduce ? scratch : buf;
    int rc = PMPI_Irecv(into + (size_t)x->st.recv_off * (size_t)extent, x->st.recv_n, datatype,
                        x->st.recv_from, tag, comm, &r[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Isend(buf + (size_t)x->st.send_off * (size_t)extent, x->st.send_n, datatype,
                        x->st.send_to, tag, comm, &r[1]);
    return rc;
}

/* Starts the next segment in a free slot if the newest one has left its first step. */
static int admit(const struct hier *h, struct slot *sl, MPI_Request *req, char *buf,
                 char *scratch, MPI_Aint extent, MPI_Datatype datatype, MPI_Comm comm, int window,
                 int *next, int *newest, int *active)
{
    if (*next >= h->nseg)
        return MPI_SUCCESS;
    if (*newest >= 0 && sl[*newest].seg == *next - 1 && sl[*newest].step == 0)
        return MPI_SUCCESS;
    for (int w = 0; w < window; w++) {
        if (sl[w].seg >= 0)
            continue;
        sl[w].seg = (*next)++;
        sl[w].step = 0;
        *newest = w;
        (*active)++;
        return post(h, &sl[w], &req[2 * w], buf, scratch, extent, datatype, comm);
    }
    return MPI_SUCCESS;
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
    if (!sdnmpi_allreduce_hier_fits(p, call->leaf_size, call->nleaves))
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    if ((rc = sdnmpi_allreduce_begin(call->sendbuf, buf, bytes, comm, &rank, &p)) != MPI_SUCCESS)
        return rc;

    struct hier h = {.k = call->leaf_size, .nleaves = call->nleaves, .count = count};
    while ((1 << h.ldims) < h.nleaves)
        h.ldims++;
    h.g = rank / h.k;
    h.j = rank % h.k;
    size_t seg_elems = call->segment ? call->segment / (size_t)extent : (size_t)count;
    if (seg_elems < 1)
        seg_elems = 1;
    h.nseg = (int)(((size_t)count + seg_elems - 1) / seg_elems);
    h.segcount = (count + h.nseg - 1) / h.nseg; /* even segments; the last may be shorter */
    h.nseg = (count + h.segcount - 1) / h.segcount;
    int nsteps = 2 * (h.k - 1) + 2 * h.ldims;
    int window = nsteps < h.nseg ? nsteps : h.nseg; /* segments in flight at most */

    char *scratch = sdnmpi_scratch(bytes, comm);
    MPI_Request *req = sdnmpi_scratch((size_t)window * 2 * sizeof *req, comm);
    int *idx = sdnmpi_scratch((size_t)window * 2 * sizeof *idx, comm);
    struct slot *sl = sdnmpi_scratch((size_t)window * sizeof *sl, comm);
    for (int w = 0; w < 2 * window; w++)
        req[w] = MPI_REQUEST_NULL;
    for (int w = 0; w < window; w++)
        sl[w].seg = -1;
    int next = 0, newest = -1, active = 0;
    /* The first segment starts at once; each next one when the newest has finished its first
     * step, so that the segments stagger along the stages instead of moving in a block. */
    rc = admit(&h, sl, req, buf, scratch, extent, datatype, comm, window, &next, &newest, &active);
    while (rc == MPI_SUCCESS && active > 0) {
        int done = 0;
        rc = PMPI_Waitsome(2 * window, req, &done, idx, MPI_STATUSES_IGNORE);
        for (int w = 0; rc == MPI_SUCCESS && w < window; w++) {
            struct slot *x = &sl[w];
            if (x->seg < 0 || req[2 * w] != MPI_REQUEST_NULL || req[2 * w + 1] != MPI_REQUEST_NULL)
                continue;
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
            rc = admit(&h, sl, req, buf, scratch, extent, datatype, comm, window, &next, &newest,
                       &active);
    }
    if (rc != MPI_SUCCESS) /* complete what was posted, so no request outlives the buffers */
        (void)PMPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE);
    free(idx);
    free(req);
    free(sl);
    free(scratch);
    return rc;
}
