/* allreduce_rd.c -- recursive doubling.
 *
 * Folding (p not a power of two): even rank 2i < 2*rem sends its vector to 2i+1 and waits; the
 * pof2 participants exchange whole vectors at distance 1, 2, 4, ...; finally 2i+1 sends the result
 * to 2i. Both partners of an exchange compute the same expression, (lower participant's data) op
 * (higher participant's data), with the same argument order, so their results are bit-identical
 * even for floating point; by induction every rank's result is.
 */
#include <stdlib.h>
#include <string.h>

#include "allreduce_algorithms.h"
#include "allreduce_util.h"
#include "schedule.h"

int sdnmpi_allreduce_intra_rd(const struct sdnmpi_allreduce_call *call)
{
    const void *sendbuf = call->sendbuf;
    void *recvbuf = call->recvbuf;
    int count = call->count;
    MPI_Datatype datatype = call->datatype;
    MPI_Aint extent = call->extent;
    MPI_Op op = call->op;
    MPI_Comm comm = call->comm;
    int rank, p, rc, pof2, rem;
    size_t bytes = (size_t)count * (size_t)extent;
    if ((rc = sdnmpi_allreduce_begin(sendbuf, recvbuf, bytes, comm, &rank, &p)) != MPI_SUCCESS
        || p == 1)
        return rc;
    sdnmpi_rd_geometry(p, &pof2, &rem);

    char *scratch = sdnmpi_scratch(bytes, comm);
    char *acc = recvbuf;  /* this rank's partial result */
    char *other = scratch; /* the partner's */
    int v = sdnmpi_rd_vrank(rank, rem);

    if (rank < 2 * rem) {
        if (v < 0) {
            rc = PMPI_Send(acc, count, datatype, rank + 1, SDNMPI_TAG, comm);
        } else {
            rc = PMPI_Recv(other, count, datatype, rank - 1, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc == MPI_SUCCESS) /* acc = (even rank's) op (mine) */
                rc = PMPI_Reduce_local(other, acc, count, datatype, op);
        }
        if (rc != MPI_SUCCESS)
            goto done;
    }
    if (v >= 0) {
        for (int d = 1; d < pof2; d <<= 1) {
            int pv = v ^ d;
            int peer = sdnmpi_rd_rank(pv, rem);
            rc = PMPI_Sendrecv(acc, count, datatype, peer, SDNMPI_TAG, other, count, datatype,
                               peer, SDNMPI_TAG, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                goto done;
            if (pv < v) { /* I am the higher one: acc = theirs op mine */
                rc = PMPI_Reduce_local(other, acc, count, datatype, op);
            } else { /* other = mine op theirs, which becomes my partial result */
                rc = PMPI_Reduce_local(acc, other, count, datatype, op);
                char *t = acc;
                acc = other;
                other = t;
            }
            if (rc != MPI_SUCCESS)
                goto done;
        }
    }
    if (rank < 2 * rem) {
        if (v >= 0)
            rc = PMPI_Send(acc, count, datatype, rank - 1, SDNMPI_TAG, comm);
        else
            rc = PMPI_Recv(recvbuf, count, datatype, rank + 1, SDNMPI_TAG, comm,
                           MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            goto done;
    }
    if (acc != (char *)recvbuf)
        memcpy(recvbuf, acc, bytes);
done:
    free(scratch);
    return rc;
}
