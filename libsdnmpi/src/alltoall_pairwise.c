/* alltoall_pairwise.c -- pairwise exchange: after copying its own block, rank q spends step k
 * (1 .. p-1) sending one block to the schedule's `to` and receiving one from its `from`
 * (alltoall_sched.h: shifts, or the leaf grid). Every step is a permutation of the ranks, which
 * the controller routes without contention (alltoall_plan.h: one plan step per exchange step);
 * each rank sends and receives (p-1)/p of its data, the least possible.
 *
 * Shifts or the grid, not swaps (q XOR k): measured on the bench fabric (bench/alltoall_probe.py),
 * a step in which two ranks swap 128 KiB or 512 KiB blocks took 2.1x the link time, while one
 * direction of the same connection alone runs at the link rate: Open MPI's TCP transport sends a
 * large message's rendezvous replies (ACK, PUT) on the connection the receiver's own block is
 * leaving by, behind that block, so the two directions take turns. Both schedules keep a connection's
 * data one-way within a step and between consecutive steps, but for the swaps alltoall_sched.h
 * names.
 *
 * The steps overlap: up to call->window steps are in flight at once (their Irecv and Isend posted
 * together); step k + window is posted when step k has completed, so no link idles between
 * steps.
 *
 * Each block goes as one message, or (call->segment > 0) as messages of call->segment bytes, all
 * posted at once: below the transport's eager limit a message needs no rendezvous round trip
 * before its data moves (libsdnmpi/README.md, SDN_MPI_ALLTOALL_SEGMENT). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall_algorithms.h"
#include "allreduce_util.h"
#include "segments.h"

/* The messages one block (> 0 bytes) goes in: segment bytes each (the last one the rest), at most
 * SDNMPI_ALLTOALL_MAX_MESSAGES (segments.h: a smaller segment is raised to block / that, rounded
 * up); one if segment is 0 or at least the block. *seg gets the bytes per message. */
static int block_messages(size_t block, size_t segment, size_t *seg)
{
    *seg = sdnmpi_segment_elems(block, 1, segment ? segment : SIZE_MAX, SDNMPI_ALLTOALL_MAX_MESSAGES);
    return (int)((block + *seg - 1) / *seg);
}

/* Posts step k's receives and sends (nmsg each, into r[0 .. 2 nmsg - 1]). MPI error code. */
static int post_step(const struct sdnmpi_alltoall_call *call, int rank, int k, int nmsg,
                     size_t seg, MPI_Request *r)
{
    const char *in = call->sendbuf;
    char *out = call->recvbuf;
    size_t block = call->block;
    int to, from, rc = MPI_SUCCESS;
    sdnmpi_alltoall_sched_peer(call->sched, rank, k, &to, &from);
    char *rbuf = out + (size_t)call->orig[from] * block;
    const char *sbuf = in + (size_t)call->orig[to] * block;
    for (int m = 0; rc == MPI_SUCCESS && m < nmsg; m++) {
        size_t off = (size_t)m * seg, n = block - off < seg ? block - off : seg;
        rc = PMPI_Irecv(rbuf + off, (int)n, MPI_BYTE, from, SDNMPI_TAG, call->comm, &r[m]);
    }
    for (int m = 0; rc == MPI_SUCCESS && m < nmsg; m++) {
        size_t off = (size_t)m * seg, n = block - off < seg ? block - off : seg;
        rc = PMPI_Isend(sbuf + off, (int)n, MPI_BYTE, to, SDNMPI_TAG, call->comm, &r[nmsg + m]);
    }
    return rc;
}

int sdnmpi_alltoall_intra_pairwise(const struct sdnmpi_alltoall_call *call)
{
    size_t block = call->block;
    int rank, p, rc;
    if ((rc = PMPI_Comm_rank(call->comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(call->comm, &p)) != MPI_SUCCESS)
        return rc;
    size_t self = (size_t)call->orig[rank] * block;
    memcpy((char *)call->recvbuf + self, (const char *)call->sendbuf + self, block);
    if (p < 2)
        return MPI_SUCCESS;
    int window = call->window < 1 ? 1 : call->window > p - 1 ? p - 1 : call->window;
    size_t seg = block;
    int nmsg = block_messages(block, call->segment, &seg), per = 2 * nmsg;
    MPI_Request *req = sdnmpi_scratch((size_t)window * (size_t)per * sizeof *req, call->comm);
    for (int w = 0; w < window * per; w++)
        req[w] = MPI_REQUEST_NULL;
    for (int k = 1; rc == MPI_SUCCESS && k < p; k++) {
        MPI_Request *r = &req[(size_t)per * (size_t)((k - 1) % window)];
        if ((rc = PMPI_Waitall(per, r, MPI_STATUSES_IGNORE)) != MPI_SUCCESS) /* step k - window */
            break;
        rc = post_step(call, rank, k, nmsg, seg, r);
    }
    /* the last steps; after an error, what was posted, so no request outlives the buffers */
    int wrc = PMPI_Waitall(window * per, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc != MPI_SUCCESS ? rc : wrc;
}
