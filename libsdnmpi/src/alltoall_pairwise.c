/* alltoall_pairwise.c -- pairwise exchange: after copying its own block, rank q spends step k
 * (1 .. p-1) sending one block to sdnmpi_alltoall_peer's `to` (q + d) and receiving one from its
 * `from` (q - d), d the step's shift. Every step is a permutation of the ranks, which the
 * controller routes without contention (alltoall_plan.h: one plan step per exchange step); each
 * rank sends and receives (p-1)/p of its data, the least possible.
 *
 * Shifts, not swaps (q XOR k): measured on the bench fabric (bench/alltoall_probe.py), a step in
 * which two ranks swap 128 KiB or 512 KiB blocks took 2.1x the link time, while one direction of
 * the same connection alone runs at the link rate: Open MPI's TCP transport sends a large
 * message's rendezvous replies (ACK, PUT) on the connection the receiver's own block is leaving
 * by, behind that block, so the two directions take turns. With shifts each connection carries
 * data one way per step (step p/2 of an even p is the one swap left), and the step order
 * (sdnmpi_alltoall_shift) keeps the opposite shifts d and p - d apart.
 *
 * The steps overlap: up to call->window steps are in flight at once (their Irecv and Isend posted
 * together); step k + window is posted when step k has completed, so no link idles between
 * steps. */
#include <stdlib.h>
#include <string.h>

#include "alltoall_algorithms.h"
#include "allreduce_util.h"

int sdnmpi_alltoall_shift(int k, int p)
{
    return k <= p / 2 ? k : p + p / 2 - k;
}

void sdnmpi_alltoall_peer(int q, int k, int p, int *to, int *from)
{
    int d = sdnmpi_alltoall_shift(k, p);
    *to = (q + d) % p;
    *from = (q - d + p) % p;
}

int sdnmpi_alltoall_intra_pairwise(const struct sdnmpi_alltoall_call *call)
{
    const char *in = call->sendbuf;
    char *out = call->recvbuf;
    size_t block = call->block;
    int rank, p, rc;
    if ((rc = PMPI_Comm_rank(call->comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(call->comm, &p)) != MPI_SUCCESS)
        return rc;
    size_t self = (size_t)call->orig[rank] * block;
    memcpy(out + self, in + self, block);
    if (p < 2)
        return MPI_SUCCESS;
    int window = call->window < 1 ? 1 : call->window > p - 1 ? p - 1 : call->window;
    MPI_Request *req = sdnmpi_scratch((size_t)window * 2 * sizeof *req, call->comm);
    for (int w = 0; w < 2 * window; w++)
        req[w] = MPI_REQUEST_NULL;
    for (int k = 1; rc == MPI_SUCCESS && k < p; k++) {
        MPI_Request *r = &req[2 * ((k - 1) % window)];
        int to, from;
        sdnmpi_alltoall_peer(rank, k, p, &to, &from);
        if ((rc = PMPI_Waitall(2, r, MPI_STATUSES_IGNORE)) != MPI_SUCCESS) /* step k - window */
            break;
        rc = PMPI_Irecv(out + (size_t)call->orig[from] * block, (int)block, MPI_BYTE, from,
                        SDNMPI_TAG, call->comm, &r[0]);
        if (rc == MPI_SUCCESS)
            rc = PMPI_Isend(in + (size_t)call->orig[to] * block, (int)block, MPI_BYTE, to,
                            SDNMPI_TAG, call->comm, &r[1]);
    }
    /* the last steps; after an error, what was posted, so no request outlives the buffers */
    int wrc = PMPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE);
    free(req);
    return rc != MPI_SUCCESS ? rc : wrc;
}
