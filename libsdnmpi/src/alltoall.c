/* alltoall.c -- SDN_MPI_Alltoall: decides between the pairwise exchange on planned routes and
 * PMPI_Alltoall.
 *
 * Like allgather.c: the block's byte count (the receive signature), comm, the knobs and the plans
 * are the same on every rank of a valid call; whether this rank's buffers are contiguous bytes is
 * agreed by one PMPI_Allreduce before any data moves. The first call also plans the exchange's
 * routes (alltoall_plan.h). MPI_IN_PLACE: the input is copied to a scratch buffer first.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allgather_util.h"
#include "alltoall_algorithms.h"
#include "alltoall_plan.h"
#include "log.h"
#include "plan.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

/* What the last SDN_MPI_Alltoall did (sdnmpi_testing.h): 1 PMPI, 2 pairwise exchange. */
static int last_path;

int sdnmpi_test_last_alltoall(void)
{
    return last_path;
}

static const struct sdnmpi_blocks_coll coll = {"alltoall", "PMPI_Alltoall", PMPI_Alltoall, &last_path};

SDNMPI_EXPORT int SDN_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
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
    int routed = 0;
    int64_t a2a_id = -1;
    if ((rc = sdnmpi_alltoall_plan_get(plan->priv, &routed, &a2a_id)) != MPI_SUCCESS)
        return rc;
    if (!routed)
        return FALLBACK("no SDN routes for the exchange");

    int local_ok = sdnmpi_blocks_local_ok(in_place, sendcount, sendtype, block, recv_ok, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    int *orig = NULL;
    void *copy = NULL;
    if (local_ok && (rc = sdnmpi_rank_map(comm, plan->priv, p, &orig)) != MPI_SUCCESS
        && rc != MPI_ERR_NO_MEM)
        return rc;
    if (local_ok && in_place && (copy = malloc((size_t)total)) != NULL)
        memcpy(copy, recvbuf, (size_t)total);
    local_ok = local_ok && orig != NULL && (!in_place || copy != NULL);
    int all_ok = 0;
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, plan->priv)) != MPI_SUCCESS
        || !all_ok) {
        free(orig);
        free(copy);
        return rc != MPI_SUCCESS ? rc
                                 : FALLBACK("non-contiguous buffers or no memory on some rank");
    }
    const struct sdnmpi_alltoall_call call = {
        .sendbuf = in_place ? copy : sendbuf, .recvbuf = recvbuf, .block = (size_t)block,
        .comm = plan->priv, .orig = orig, .window = sdnmpi_g.cfg.alltoall_window,
    };
    last_path = 2;
    sdnmpi_log("alltoall comm=%" PRId64 " block=%" PRIu64 " bytes=%" PRIu64 ": pairwise exchange",
               a2a_id, block, total);
    rc = sdnmpi_alltoall_intra_pairwise(&call);
    free(orig);
    free(copy);
    return rc;
#undef FALLBACK
}
