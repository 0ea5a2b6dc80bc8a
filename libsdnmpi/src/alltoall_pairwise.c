/* alltoall_pairwise.c -- pairwise exchange: after copying its own block, rank q spends step k
 * (1 .. p-1) sending one block to sdnmpi_alltoall_peer's `to` and receiving one from its `from`.
 * Every step is a permutation of the ranks, which the controller routes without contention
 * (alltoall_plan.h: one plan step per exchange step); each rank sends and receives (p-1)/p of its
 * data, the least possible, one flow at a time. */
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
    for (int k = 1; k < p; k++) {
        int to, from;
        sdnmpi_alltoall_peer(rank, k, p, &to, &from);
        rc = PMPI_Sendrecv(in + (size_t)call->orig[to] * block, (int)block, MPI_BYTE, to,
                           SDNMPI_TAG, out + (size_t)call->orig[from] * block, (int)block,
                           MPI_BYTE, from, SDNMPI_TAG, call->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
