/* reduce_chain.c -- pipelined reduce along two chains that end at the root.
 *
 * The vector is cut in two halves. Half c (0 or 1) travels along cycle c of cycles.h, cut open at
 * the root: it starts at the root's successor in that cycle, and every rank on the way receives the
 * partial result of the ranks before it, reduces its own data in and passes it on, segment by
 * segment (call->segment bytes, sdnmpi_reduce_segment_elems), so that all hops carry data at once.
 * The root reduces the last partial results into its receive buffer. Each rank sends and receives
 * the vector about once (half per chain), the root receives it once: the host-link bound, and
 * because the two cycles leave and enter every leaf once each (over different uplinks when the plan
 * routes them), the cut bound too, plus the pipeline's fill of (p - 1) segments. Every receive is
 * posted before any data moves; sends do not wait for each other, and one Waitany over both chains'
 * next receives (sdnmpi_cycles_waitany) passes on whichever arrives first, so no rank ever blocks
 * its neighbours and neither chain waits for the other. The two chains use their own tags: between
 * two ranks of one leaf both run the same direction.
 */
#include <stdlib.h>
#include <string.h>

#include "allreduce_util.h"
#include "reduce_algorithms.h"
#include "cycles.h"

struct chain {
    int prev, next;    /* -1: this rank starts (no prev) / ends (the root: no next) the chain */
    size_t first, len; /* the half: elements [first, first + len) */
};

/* Segment k of chain c: elements [*off, *off + *n). */
static void segment_of(const struct chain *c, size_t seg_elems, int k, size_t *off, int *n)
{
    size_t lo = (size_t)k * seg_elems, hi = lo + seg_elems < c->len ? lo + seg_elems : c->len;
    *off = c->first + lo;
    *n = (int)(hi - lo);
}

int sdnmpi_reduce_intra_chain(const struct sdnmpi_reduce_call *call)
{
    MPI_Datatype dt = call->datatype;
    MPI_Comm comm = call->comm;
    int rank, p, rc = MPI_SUCCESS;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (call->count < 2 || call->root < 0 || call->root >= p || p < 2)
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    const size_t ext = (size_t)call->extent, count = (size_t)call->count;
    size_t seg_elems = sdnmpi_reduce_segment_elems(count, ext, call->segment);
    const struct sdnmpi_cycles ch = {p, call->leaf_start, call->nleaves};
    struct chain c[2];
    struct sdnmpi_cycle_recvs rx[2]; /* chain i's segments: rx[i].n, passed on so far: rx[i].done */
    int nreq = 0;
    for (int i = 0; i < 2; i++) {
        int prev = sdnmpi_cycle_prev(&ch, i, rank), next = sdnmpi_cycle_next(&ch, i, rank);
        c[i].prev = prev == call->root ? -1 : prev;
        c[i].next = rank == call->root ? -1 : next;
        c[i].first = i == 0 ? 0 : count / 2;
        c[i].len = i == 0 ? count / 2 : count - count / 2;
        rx[i].n = (int)((c[i].len + seg_elems - 1) / seg_elems);
        rx[i].done = 0;
        nreq += rx[i].n;
    }
    const char *mine = call->sendbuf == MPI_IN_PLACE ? call->recvbuf : call->sendbuf;
    if (rank == call->root && call->sendbuf != MPI_IN_PLACE)
        memcpy(call->recvbuf, call->sendbuf, count * ext);
    /* Partial results arrive here (all ranks but the chains' starts), at their own offsets. */
    char *tmp = sdnmpi_scratch(count * ext, comm);
    /* Like tmp: out of memory here aborts the job (every rank is in the call; a rank that
     * returned alone would leave the others waiting for its messages). */
    MPI_Request *recv = sdnmpi_scratch((size_t)nreq * sizeof *recv, comm);
    MPI_Request *send = sdnmpi_scratch((size_t)nreq * sizeof *send, comm);
    int nsend = 0;
    for (int i = 0; i < nreq; i++)
        recv[i] = MPI_REQUEST_NULL;
    rx[0].recv = recv;
    rx[1].recv = recv + rx[0].n;
    /* Post every receive first; a chain's start sends its own data at once. */
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++)
        for (int k = 0; c[i].prev >= 0 && k < rx[i].n && rc == MPI_SUCCESS; k++) {
            size_t off;
            int n;
            segment_of(&c[i], seg_elems, k, &off, &n);
            rc = PMPI_Irecv(tmp + off * ext, n, dt, c[i].prev, SDNMPI_TAG + i, comm, &rx[i].recv[k]);
        }
    for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++)
        for (; c[i].prev < 0 && rx[i].done < rx[i].n && rc == MPI_SUCCESS; rx[i].done++) {
            size_t off;
            int n;
            segment_of(&c[i], seg_elems, rx[i].done, &off, &n);
            rc = PMPI_Isend(mine + off * ext, n, dt, c[i].next, SDNMPI_TAG + i, comm, &send[nsend++]);
        }
    /* Then pass each partial result on as it arrives, each chain in its order. */
    int i, k;
    while (rc == MPI_SUCCESS && sdnmpi_cycles_waitany(rx, &i, &k, &rc)) {
        size_t off;
        int n;
        segment_of(&c[i], seg_elems, k, &off, &n);
        if (c[i].next < 0) { /* the root: into the result */
            rc = PMPI_Reduce_local(tmp + off * ext, (char *)call->recvbuf + off * ext, n, dt,
                                   call->op);
        } else {
            rc = PMPI_Reduce_local(mine + off * ext, tmp + off * ext, n, dt, call->op);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Isend(tmp + off * ext, n, dt, c[i].next, SDNMPI_TAG + i, comm,
                                &send[nsend++]);
        }
    }
    if (rc == MPI_SUCCESS && nsend > 0)
        rc = PMPI_Waitall(nsend, send, MPI_STATUSES_IGNORE);
    free(recv);
    free(send);
    free(tmp);
    return rc;
}
