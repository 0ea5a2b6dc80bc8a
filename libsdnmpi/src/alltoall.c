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
static struct sdnmpi_blocks_coll coll = {"alltoall", "PMPI_Alltoall", PMPI_Alltoall, 0};

int sdnmpi_test_last_alltoall(void)
{
    return coll.last_path;
}

SDNMPI_EXPORT int SDN_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    const struct sdnmpi_blocks_args args = {sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm};
    const int in_place = sendbuf == MPI_IN_PLACE;
    struct sdnmpi_blocks_view v;
    int routed = 0, rc = MPI_SUCCESS;
    int64_t a2a_id = -1;
    struct sdnmpi_alltoall_sched sched;
    if (sdnmpi_blocks_enter(&coll, &args, &v, &rc))
        return rc;
    sdnmpi_alltoall_sched_init(&sched, v.p, v.plan->leaf_start, v.plan->nleaves,
                               sdnmpi_g.cfg.alltoall_grid);
    if ((rc = sdnmpi_alltoall_plan_get(v.plan->priv, &sched, &routed, &a2a_id)) != MPI_SUCCESS)
        return rc;
    if (!routed)
        return sdnmpi_blocks_fallback(&coll, &args, "no SDN routes for the exchange");
    if (sdnmpi_blocks_agree(&coll, &args, &v, in_place ? (size_t)v.total : 0, &rc))
        return rc;
    const struct sdnmpi_alltoall_call call = {
        .sendbuf = in_place ? v.copy : sendbuf, .recvbuf = recvbuf, .block = (size_t)v.block,
        .comm = v.plan->priv, .orig = v.orig, .sched = &sched,
        .window = sdnmpi_g.cfg.alltoall_window, .segment = (size_t)sdnmpi_g.cfg.alltoall_segment,
    };
    coll.last_path = 2;
    sdnmpi_log("alltoall comm=%" PRId64 " block=%" PRIu64 " bytes=%" PRIu64
               ": pairwise exchange, %s", a2a_id, v.block, v.total, sched.leaves ? "leaf grid" : "shifts");
    rc = sdnmpi_alltoall_intra_pairwise(&call);
    free(v.orig);
    free(v.copy);
    return rc;
}
