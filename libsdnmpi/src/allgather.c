/* allgather.c -- SDN_MPI_Allgather: decides between the SDN algorithms and PMPI_Allgather.
 *
 * The decision's inputs are the same on all ranks of a valid call (the receive signature, hence
 * the block's byte count; comm; the knobs agreed at SDN_MPI_Init; the plan), except the datatypes'
 * layouts, which MPI lets differ between ranks: whether this rank's buffers are contiguous bytes
 * (and the send and receive blocks the same size) is agreed by one PMPI_Allreduce per call before
 * any data moves. Recursive doubling on the allreduce plan's routes when p is a power of two,
 * the ring (contention-free on the leaf-ordered ranks) otherwise.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "allgather_algorithms.h"
#include "allgather_util.h"
#include "log.h"
#include "plan.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

/* What the last SDN_MPI_Allgather did (sdnmpi_testing.h): 1 PMPI, 2 recursive doubling, 3 ring. */
static int last_path;

int sdnmpi_test_last_allgather(void)
{
    return last_path;
}

static const struct sdnmpi_blocks_coll coll = {"allgather", "PMPI_Allgather", PMPI_Allgather, &last_path};

SDNMPI_EXPORT int SDN_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    const struct sdnmpi_blocks_args args = {sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm};
#define FALLBACK(reason) sdnmpi_blocks_fallback(&coll, &args, reason)
    int in_place = sendbuf == MPI_IN_PLACE, p = 0, recv_ok = 0, rc = MPI_SUCCESS;
    uint64_t block = 0, total = 0;
    if (sdnmpi_blocks_enter(&coll, &args, &p, &block, &total, &recv_ok, &rc))
        return rc;

    const struct sdnmpi_plan *plan = NULL;
    if ((rc = sdnmpi_plan_get(comm, &plan)) != MPI_SUCCESS)
        return rc;
    if (!plan->ok)
        return FALLBACK("no SDN routes for this communicator");

    /* This rank's view, then everyone's. */
    int rank = 0;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return rc;
    int local_ok = sdnmpi_blocks_local_ok(in_place, sendcount, sendtype, block, recv_ok, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    int *orig = NULL;
    if (local_ok && (rc = sdnmpi_rank_map(comm, plan->priv, p, &orig)) != MPI_SUCCESS
        && rc != MPI_ERR_NO_MEM)
        return rc;
    local_ok = local_ok && orig != NULL;
    int all_ok = 0;
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, plan->priv)) != MPI_SUCCESS
        || !all_ok) {
        free(orig);
        return rc != MPI_SUCCESS ? rc : FALLBACK("non-contiguous buffers on some rank");
    }

    const struct sdnmpi_allgather_call call = {
        .sendblock = in_place ? (const char *)recvbuf + (size_t)rank * block : sendbuf,
        .recvbuf = recvbuf, .block = (size_t)block, .comm = plan->priv, .orig = orig,
        .dist = plan->rab_dist, .ndims = plan->rab_ndims,
    };
    sdnmpi_allgather_fn algorithm = sdnmpi_allgather_intra_ring;
    const char *name = "ring";
    last_path = 3;
    if ((p & (p - 1)) == 0 && (1 << plan->rab_ndims) == p) {
        algorithm = sdnmpi_allgather_intra_rd;
        name = "recursive doubling";
        last_path = 2;
    }
    sdnmpi_log("allgather comm=%" PRId64 " block=%" PRIu64 " bytes=%" PRIu64 ": %s",
               plan->comm_id, block, total, name);
    rc = algorithm(&call);
    free(orig);
    return rc;
#undef FALLBACK
}
