/* allgather_cycles.c -- allgather along the two cycles of cycles.h: two ring allgathers at once.
 *
 * Every block is cut in two halves (block / 2 bytes and the rest). Half c (0 or 1) of every block
 * travels around cycle c as in the ring (allgather_ring.c): rank r sends its own half first, then
 * passes on each half it receives from its predecessor in cycle c, the half of the rank k + 1
 * places before it at its k-th receive (k = 0 .. p-2), except the last. Each rank so sends and
 * receives (p-1) half blocks per cycle, (p-1) blocks in all: the host-link bound. The two cycles
 * leave and enter every leaf once each, over different uplinks when the controller routes them
 * (sdnmpi_cycles_routed), so a leaf's cut carries its traffic on two links, not one: the cut bound.
 * The cycles are decoupled: every receive is posted before any data moves, straight into the
 * user's receive buffer at its block's place (no copy but the own block's), and each half is sent
 * on as soon as it arrives (one Waitany over the two cycles' next receives, sdnmpi_cycles_waitany),
 * so neither cycle waits for the other. Between two ranks of one leaf both cycles run the same
 * direction: each uses its own tag. A half of 0 bytes (1-byte blocks) moves nothing. Any p >= 2.
 */
#include <stdlib.h>
#include <string.h>

#include "allgather_algorithms.h"
#include "allreduce_util.h"
#include "cycles.h"

struct ring {
    int prev, next;
    size_t off, len; /* the half: bytes [off, off + len) of every block */
    int *origin;     /* origin[k]: the user rank whose half arrives at receive k */
};

int sdnmpi_allgather_intra_cycles(const struct sdnmpi_allgather_call *call)
{
    MPI_Comm comm = call->comm;
    const size_t block = call->block;
    char *out = call->recvbuf;
    int rank, p, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (p < 2)
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    const int n = p - 1;
    char *mine = out + (size_t)call->orig[rank] * block;
    if ((const char *)call->sendblock != mine)
        memcpy(mine, call->sendblock, block);
    const struct sdnmpi_cycles ch = {p, call->leaf_start, call->nleaves};
    /* Out of memory here aborts the job, as the other algorithms' buffers do (sdnmpi_scratch):
     * every rank is in the call, and a rank that returned alone would leave the others waiting. */
    int *origin = sdnmpi_scratch((size_t)(2 * n) * sizeof *origin, comm);
    MPI_Request *req = sdnmpi_scratch((size_t)(4 * n) * sizeof *req, comm), *send = req + 2 * n;
    int nsend = 0;
    struct ring ring[2];
    struct sdnmpi_cycle_recvs rx[2]; /* cycle c's receives: rx[c].n = p - 1, handled: rx[c].done */
    for (int c = 0; c < 2; c++) {
        struct ring *g = &ring[c];
        g->prev = sdnmpi_cycle_prev(&ch, c, rank);
        g->next = sdnmpi_cycle_next(&ch, c, rank);
        g->off = c == 0 ? 0 : block / 2;
        g->len = c == 0 ? block / 2 : block - block / 2;
        g->origin = origin + c * n;
        rx[c] = (struct sdnmpi_cycle_recvs){req + c * n, n, g->len == 0 ? n : 0};
        for (int k = 0, q = rank; k < n; k++) {
            q = sdnmpi_cycle_prev(&ch, c, q);
            g->origin[k] = call->orig[q];
            rx[c].recv[k] = MPI_REQUEST_NULL;
        }
    }
    /* Every receive first, then both own halves. */
    for (int c = 0; c < 2; c++)
        for (int k = rx[c].done; k < n && rc == MPI_SUCCESS; k++)
            rc = PMPI_Irecv(out + (size_t)ring[c].origin[k] * block + ring[c].off, (int)ring[c].len,
                            MPI_BYTE, ring[c].prev, SDNMPI_TAG + c, comm, &rx[c].recv[k]);
    for (int c = 0; c < 2 && rc == MPI_SUCCESS; c++)
        if (rx[c].done < n)
            rc = PMPI_Isend(mine + ring[c].off, (int)ring[c].len, MPI_BYTE, ring[c].next,
                            SDNMPI_TAG + c, comm, &send[nsend++]);
    /* Then each half on as it arrives, each cycle in its order. */
    int c, k;
    while (rc == MPI_SUCCESS && sdnmpi_cycles_waitany(rx, &c, &k, &rc))
        if (k < n - 1) /* the last half received stops here: its next rank holds it already */
            rc = PMPI_Isend(out + (size_t)ring[c].origin[k] * block + ring[c].off, (int)ring[c].len,
                            MPI_BYTE, ring[c].next, SDNMPI_TAG + c, comm, &send[nsend++]);
    if (rc == MPI_SUCCESS && nsend > 0)
        rc = PMPI_Waitall(nsend, send, MPI_STATUSES_IGNORE);
    free(origin);
    free(req);
    return rc;
}
