/* allgather_ring.c -- ring allgather: at step k (0 .. p-2) rank q sends the block it received at
 * step k-1 (its own at step 0), the block of rank q - k, to rank q + 1 and receives the block of
 * rank q - k - 1 from rank q - 1 (mod p). Each rank sends and receives (p-1)/p of the data, the
 * least possible. On the plan's private communicator the ranks are ordered leaf by leaf, so in
 * every step exactly one flow leaves and one enters each leaf: no switch link carries two flows,
 * whatever the routes. Blocks move straight between the user's buffers (no copy but the own
 * block's). Any p.
 */
#include <string.h>

#include "allgather_algorithms.h"
#include "allreduce_util.h"

int sdnmpi_allgather_intra_ring(const struct sdnmpi_allgather_call *call)
{
    MPI_Comm comm = call->comm;
    size_t block = call->block;
    char *out = call->recvbuf;
    int rank, p, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    char *mine = out + (size_t)call->orig[rank] * block;
    if ((const char *)call->sendblock != mine)
        memcpy(mine, call->sendblock, block);
    int right = (rank + 1) % p, left = (rank + p - 1) % p;
    for (int k = 0; k < p - 1; k++) {
        int give = call->orig[(rank - k + p) % p], take = call->orig[(rank - k - 1 + 2 * p) % p];
        rc = PMPI_Sendrecv(out + (size_t)give * block, (int)block, MPI_BYTE, right, SDNMPI_TAG,
                           out + (size_t)take * block, (int)block, MPI_BYTE, left, SDNMPI_TAG,
                           comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
