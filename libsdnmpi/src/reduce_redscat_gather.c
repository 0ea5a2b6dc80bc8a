/* reduce_redscat_gather.c -- Rabenseifner's reduce: reduce-scatter, then gather to the root.
 *
 * Folding as in recursive doubling (schedule.h): even rank 2i < 2*rem sends its vector to 2i+1,
 * which reduces it in. The pof2 participants then halve at the plan's distances dist[0], dist[1],
 * ... (at each, a participant keeps the half of its block range on its side of the distance's bit,
 * sends the other half to its partner and reduces the partner's copy of the kept half into its
 * own; the first step moves half of the vector, on the step the controller's loads make
 * cheapest), until each owns one fully reduced block. The gather runs the distances in reverse:
 * at dist[i] the partner whose bit differs from the target participant's sends its whole range
 * and leaves; the target ends with the vector. The target is the root's participant, or the
 * root's odd neighbour when the root was folded out (it then sends the result to the root).
 * Every pair is one of recursive doubling's, whose routes the plan installed. Each rank sends at
 * most about twice its vector's share, the root receives about the vector once.
 */
#include <stdlib.h>
#include <string.h>

#include "allreduce_util.h"
#include "reduce_algorithms.h"
#include "schedule.h"

static int block_start(int count, int nblocks, int b)
{
    int q = count / nblocks, r = count % nblocks;
    return b * q + (b < r ? b : r);
}

int sdnmpi_reduce_intra_redscat_gather(const struct sdnmpi_reduce_call *call)
{
    MPI_Datatype dt = call->datatype;
    MPI_Comm comm = call->comm;
    int count = call->count, root = call->root, rank, p, rc, pof2, rem;
    size_t ext = (size_t)call->extent, bytes = (size_t)count * ext;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    if (count < pof2 || (1 << call->ndims) != pof2 || root < 0 || root >= p)
        return MPI_ERR_ARG; /* the dispatcher checks this first */

    /* The working vector: the root's receive buffer, else scratch. */
    char *own = rank == root ? NULL : sdnmpi_scratch(bytes, comm);
    char *buf = rank == root ? call->recvbuf : own;
    if (call->sendbuf != MPI_IN_PLACE)
        memcpy(buf, call->sendbuf, bytes);
    char *tmp = sdnmpi_scratch(bytes, comm);
    int v = sdnmpi_rd_vrank(rank, rem);
    int target = sdnmpi_rd_vrank(root, rem);
    if (target < 0)
        target = sdnmpi_rd_vrank(root + 1, rem);

    if (rank < 2 * rem) {
        if (v < 0) {
            rc = PMPI_Send(buf, count, dt, rank + 1, SDNMPI_TAG, comm);
        } else {
            rc = PMPI_Recv(tmp, count, dt, rank - 1, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Reduce_local(tmp, buf, count, dt, call->op);
        }
        if (rc != MPI_SUCCESS)
            goto done;
    }
    if (v >= 0) {
        int lo = 0, hi = pof2;
        int plo[SDNMPI_RD_MAX_DIMS], phi[SDNMPI_RD_MAX_DIMS];
        for (int i = 0; i < call->ndims; i++) {
            int d = call->dist[i], peer = sdnmpi_rd_rank(v ^ d, rem);
            int mid = lo + (hi - lo) / 2;
            int klo = (v & d) ? mid : lo, khi = (v & d) ? hi : mid;
            int glo = (v & d) ? lo : mid, ghi = (v & d) ? mid : hi;
            int k0 = block_start(count, pof2, klo), kn = block_start(count, pof2, khi) - k0;
            int g0 = block_start(count, pof2, glo), gn = block_start(count, pof2, ghi) - g0;
            rc = PMPI_Sendrecv(buf + (size_t)g0 * ext, gn, dt, peer, SDNMPI_TAG, tmp, kn, dt, peer,
                               SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS)
                rc = PMPI_Reduce_local(tmp, buf + (size_t)k0 * ext, kn, dt, call->op);
            if (rc != MPI_SUCCESS)
                goto done;
            plo[i] = lo;
            phi[i] = hi;
            lo = klo;
            hi = khi;
        }
        for (int i = call->ndims - 1; i >= 0; i--) {
            int d = call->dist[i], peer = sdnmpi_rd_rank(v ^ d, rem);
            int m0 = block_start(count, pof2, lo), mn = block_start(count, pof2, hi) - m0;
            if ((v & d) != (target & d)) { /* hand my range towards the target, and leave */
                rc = PMPI_Send(buf + (size_t)m0 * ext, mn, dt, peer, SDNMPI_TAG, comm);
                goto done;
            }
            int tlo = lo == plo[i] ? hi : plo[i], thi = lo == plo[i] ? phi[i] : lo;
            int t0 = block_start(count, pof2, tlo), tn = block_start(count, pof2, thi) - t0;
            rc = PMPI_Recv(buf + (size_t)t0 * ext, tn, dt, peer, SDNMPI_TAG, comm,
                           MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto done;
            lo = plo[i];
            hi = phi[i];
        }
        /* I am the target: the whole vector is in buf. */
        if (rank != root)
            rc = PMPI_Send(buf, count, dt, root, SDNMPI_TAG, comm);
    } else if (rank == root) { /* folded out: my odd neighbour gathered for me */
        rc = PMPI_Recv(buf, count, dt, rank + 1, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
    }
done:
    free(tmp);
    free(own);
    return rc;
}
