/* allgather_rd.c -- recursive doubling allgather on the allreduce plan's pairs (p a power of two).
 *
 * The blocks are gathered in a scratch buffer of p slots. The slot of rank v is where
 * Rabenseifner's halving (allreduce_rabenseifner.c) would leave v at the plan's distances
 * dist[0], dist[1], ...: at each, the lower half of the range for ranks without that bit, the
 * upper half for those with it. Doubling runs the distances in reverse: at dist[i] partners v and
 * v ^ dist[i] swap their ranges, the two halves of the range they split at step i, so the held
 * range doubles and stays contiguous. The last exchange (dist[0]) moves half of the data, on the
 * step the controller's loads make cheapest. The pairs are those of recursive doubling, whose
 * routes the plan installed. Finally the slots are copied to the user's order.
 */
#include <string.h>
#include <stdlib.h>

#include "allgather_algorithms.h"
#include "allreduce_util.h"
#include "schedule.h"

/* Rank v's slot; lo/hi[i] the range before halving step i (may be NULL). */
static int slot_of(int v, int p, const int *dist, int ndims, int *plo, int *phi)
{
    int lo = 0, hi = p;
    for (int i = 0; i < ndims; i++) {
        int mid = lo + (hi - lo) / 2;
        if (plo != NULL) {
            plo[i] = lo;
            phi[i] = hi;
        }
        if (v & dist[i])
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int sdnmpi_allgather_intra_rd(const struct sdnmpi_allgather_call *call)
{
    MPI_Comm comm = call->comm;
    size_t block = call->block;
    int rank, p, rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if ((p & (p - 1)) != 0 || (1 << call->ndims) != p || call->ndims > SDNMPI_RD_MAX_DIMS)
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    char *slots = sdnmpi_scratch((size_t)p * block, comm);
    int plo[SDNMPI_RD_MAX_DIMS], phi[SDNMPI_RD_MAX_DIMS];
    int lo = slot_of(rank, p, call->dist, call->ndims, plo, phi), hi = lo + 1;
    memcpy(slots + (size_t)lo * block, call->sendblock, block);
    for (int i = call->ndims - 1; i >= 0; i--) {
        int peer = rank ^ call->dist[i];
        int their_lo = lo == plo[i] ? hi : plo[i];
        int their_hi = lo == plo[i] ? phi[i] : lo;
        rc = PMPI_Sendrecv(slots + (size_t)lo * block, (int)((size_t)(hi - lo) * block), MPI_BYTE,
                           peer, SDNMPI_TAG, slots + (size_t)their_lo * block,
                           (int)((size_t)(their_hi - their_lo) * block), MPI_BYTE, peer,
                           SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto done;
        lo = plo[i];
        hi = phi[i];
    }
    for (int q = 0; q < p; q++) {
        int s = slot_of(q, p, call->dist, call->ndims, NULL, NULL);
        memcpy((char *)call->recvbuf + (size_t)call->orig[q] * block, slots + (size_t)s * block,
               block);
    }
done:
    free(slots);
    return rc;
}
