/* allreduce_rabenseifner.c -- Rabenseifner's allreduce for large vectors.
 *
 * Same folding as recursive doubling (schedule.h). The pof2 participants split the vector into
 * pof2 blocks (sizes differ by at most one element). Reduce-scatter by recursive halving: at
 * distance d = pof2/2, ..., 2, 1 each participant keeps the half of its current block range on
 * its side of bit d of its participant index, sends the other half to its partner v ^ d and
 * reduces the partner's copy of the kept half into its own; participant v ends up owning the fully
 * reduced block v. Allgather by recursive doubling: at distance d = 1, 2, ..., pof2/2 partners swap
 * their aligned ranges of d blocks. Each block is reduced on exactly one rank and then copied, so
 * every rank's result is bit-identical. The pairs are those of the schedule; only the order of
 * the distances differs between the two phases.
 */
#include <stdlib.h>
#include <string.h>

#include "allreduce.h"
#include "schedule.h"

/* First element of block b of `count` elements cut into `nblocks`. */
static int block_start(int count, int nblocks, int b)
{
    int q = count / nblocks, r = count % nblocks;
    return b * q + (b < r ? b : r);
}

int sdnmpi_allreduce_rabenseifner(const void *sendbuf, void *recvbuf, int count,
                                  MPI_Datatype datatype, MPI_Aint extent, MPI_Op op,
                                  MPI_Comm comm)
{
    int rank, p, rc, pof2, rem;
    size_t bytes = (size_t)count * (size_t)extent;
    char *buf = recvbuf;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        memcpy(recvbuf, sendbuf, bytes);
    if (p == 1)
        return MPI_SUCCESS;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    if (count < pof2) /* the dispatcher never asks for this; stay correct anyway */
        return sdnmpi_allreduce_rd(MPI_IN_PLACE, recvbuf, count, datatype, extent, op, comm);

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
        for (int d = pof2 / 2; d >= 1; d >>= 1) {
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
            lo = keep_lo;
            hi = keep_hi;
        }
        for (int d = 1; d < pof2; d <<= 1) {
            int pv = v ^ d;
            int peer = sdnmpi_rd_rank(pv, rem);
            int mine0 = block_start(count, pof2, v & ~(d - 1));
            int minen = block_start(count, pof2, (v & ~(d - 1)) + d) - mine0;
            int theirs0 = block_start(count, pof2, pv & ~(d - 1));
            int theirsn = block_start(count, pof2, (pv & ~(d - 1)) + d) - theirs0;
            rc = PMPI_Sendrecv(buf + (size_t)mine0 * (size_t)extent, minen, datatype, peer,
                               SDNMPI_TAG, buf + (size_t)theirs0 * (size_t)extent, theirsn,
                               datatype, peer, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto done;
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
