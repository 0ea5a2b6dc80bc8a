/* alltoall_pairwise.c -- pairwise exchange: after copying its own block, rank q spends step k
 * (1 .. p-1) sending one block to sdnmpi_alltoall_peer's `to` and receiving one from its `from`.
 * Every step is a permutation of the ranks, which the controller routes without contention
 * (alltoall_plan.h: one plan step per exchange step); each rank sends and receives (p-1)/p of its
 * data, the least possible.
 *
 * The steps overlap: up to call->window steps are in flight at once (their Irecv and Isend posted
 * together); step k + window is posted when step k has completed. A blocking step loop
 * (window 1) leaves every link idle between steps and restarts each TCP connection from an idle
 * congestion window; with all steps in flight each leaf uplink carries its share of every step's
 * flows, which the per-step routes spread evenly over the uplinks (bench/README.md). */
#include <stdlib.h>
#include <string.h>

#include "alltoall_algorithms.h"
#include "allreduce_util.h"

void sdnmpi_alltoall_peer(int q, int k, int p, int *to, int *from)
{
    if ((p & (p - 1)) == 0) {
        *to = *from = q ^ k;
    } else {
        *to = (q + k) % p;
        *from = (q - k + p) % p;
    }
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
