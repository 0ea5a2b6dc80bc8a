/* allreduce_rabenseifner.c -- Rabenseifner's allreduce for large vectors.
 *
 * Same folding as recursive doubling (schedule.h). The pof2 participants split the vector into
 * pof2 blocks (sizes differ by at most one element). Reduce-scatter by recursive halving: at
 * each distance d of the plan's order (dist[0] first; sdnmpi_rab_order) each participant keeps
 * the half of its current block range on its side of bit d of its participant index, sends the
 * other half to its partner v ^ d and reduces the partner's copy of the kept half into its own;
 * after the last distance it owns one fully reduced block. The first distance moves half of the
 * vector, the next a quarter, and so on, so the order puts the cheapest step first. Allgather:
 * the same distances in reverse, each time partners swap their halves of the range they split
 * at that distance. Each block is reduced on exactly one rank and then copied, so every rank's
 * result is bit-identical. The pairs are those of the schedule, whatever the order.
 */
#include <stdlib.h>
#include <string.h>

#include "allreduce_algorithms.h"
#include "allreduce_util.h"
#include "schedule.h"

/* First element of block b of `count` elements cut into `nblocks`. */
static int block_start(int count, int nblocks, int b)
{
    int q = count / nblocks, r = count % nblocks;
    return b * q + (b < r ? b : r);
}

int sdnmpi_allreduce_rab_fits(int p, int count, int ndims)
{
    int pof2, rem;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    int dims = sdnmpi_rd_nsteps(p) - (rem ? 2 : 0); /* the exchange steps: log2 pof2 */
    return count >= pof2 && ndims == dims;
}

int sdnmpi_allreduce_intra_rabenseifner(const struct sdnmpi_allreduce_call *call)
{
    void *recvbuf = call->recvbuf;
    int count = call->count;
    MPI_Datatype datatype = call->datatype;
    MPI_Aint extent = call->extent;
    MPI_Op op = call->op;
    MPI_Comm comm = call->comm;
    const int *dist = call->dist;
    int ndims = call->ndims;
    int rank, p, rc, pof2, rem;
    size_t bytes = (size_t)count * (size_t)extent;
    char *buf = recvbuf;
    if ((rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (p > 1 && !sdnmpi_allreduce_rab_fits(p, count, ndims))
        return MPI_ERR_ARG; /* the dispatcher checks this first */
    if ((rc = sdnmpi_allreduce_begin(call->sendbuf, recvbuf, bytes, comm, &rank, &p)) != MPI_SUCCESS
        || p == 1)
        return rc;
    sdnmpi_rd_geometry(p, &pof2, &rem);

    char *scratch = sdnmpi_scratch(bytes, comm);
    int v = sdnmpi_rd_vrank(rank, rem);

    if (rank < 2 * rem) {
        if (v < 0) {
            rc = PMPI_Send(buf, count, datatype, rank + 1, SDNMPI_TAG, comm);
        } else {
            rc = PMPI_Recv(scratch, count, datatype, rank - 1, SDNMPI_TAG, comm,
                           MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Reduce_local(scratch, buf, count, datatype, op);
        }
        if (rc != MPI_SUCCESS)
            goto done;
    }
    if (v >= 0) {
        int lo = 0, hi = pof2; /* my block range */
        int parent_lo[SDNMPI_RD_MAX_DIMS], parent_hi[SDNMPI_RD_MAX_DIMS];
        for (int i = 0; i < ndims; i++) {
            int d = dist[i];
            int peer = sdnmpi_rd_rank(v ^ d, rem);
            int mid = lo + (hi - lo) / 2;
            int keep_lo = (v & d) ? mid : lo, keep_hi = (v & d) ? hi : mid;
            int give_lo = (v & d) ? lo : mid, give_hi = (v & d) ? mid : hi;
            int keep0 = block_start(count, pof2, keep_lo);
            int keepn = block_start(count, pof2, keep_hi) - keep0;
            int give0 = block_start(count, pof2, give_lo);
            int given = block_start(count, pof2, give_hi) - give0;
            rc = PMPI_Sendrecv(buf + (size_t)give0 * (size_t)extent, given, datatype, peer,
                               SDNMPI_TAG, scratch, keepn, datatype, peer, SDNMPI_TAG, comm,
                               MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Reduce_local(scratch, buf + (size_t)keep0 * (size_t)extent, keepn,
                                       datatype, op);
            if (rc != MPI_SUCCESS)
                goto done;
            parent_lo[i] = lo;
            parent_hi[i] = hi;
            lo = keep_lo;
            hi = keep_hi;
        }
        for (int i = ndims - 1; i >= 0; i--) {
            int peer = sdnmpi_rd_rank(v ^ dist[i], rem);
            /* The partner holds the other half of the range both split at halving step i. */
            int their_lo = lo == parent_lo[i] ? hi : parent_lo[i];
            int their_hi = lo == parent_lo[i] ? parent_hi[i] : lo;
            int mine0 = block_start(count, pof2, lo);
            int minen = block_start(count, pof2, hi) - mine0;
            int theirs0 = block_start(count, pof2, their_lo);
            int theirsn = block_start(count, pof2, their_hi) - theirs0;
            rc = PMPI_Sendrecv(buf + (size_t)mine0 * (size_t)extent, minen, datatype, peer,
                               SDNMPI_TAG, buf + (size_t)theirs0 * (size_t)extent, theirsn,
                               datatype, peer, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto done;
            lo = parent_lo[i];
            hi = parent_hi[i];
        }
    }
    if (rank < 2 * rem) {
        if (v >= 0)
            rc = PMPI_Send(buf, count, datatype, rank - 1, SDNMPI_TAG, comm);
        else
            rc = PMPI_Recv(buf, count, datatype, rank + 1, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
    }
done:
    free(scratch);
    return rc;
}
