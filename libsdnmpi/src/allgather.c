/* allgather.c -- SDN_MPI_Allgather: decides between the SDN algorithms and PMPI_Allgather.
 *
 * The decision's inputs are the same on all ranks of a valid call (the receive signature, hence
 * the block's byte count; comm; the knobs agreed at SDN_MPI_Init; the plan), except the datatypes'
 * layouts, which MPI lets differ between ranks: whether this rank's buffers are contiguous bytes
 * (and the send and receive blocks the same size) is agreed by one PMPI_Allreduce per call before
 * any data moves (allgather_util.h: sdnmpi_blocks_enter, sdnmpi_blocks_agree). Recursive
 * doubling on the allreduce plan's routes when p is a power of two, the ring (contention-free on
 * the leaf-ordered ranks) otherwise; from SDN_MPI_ALLGATHER_CYCLES_MIN bytes on (the whole receive
 * buffer) two rings at once along the two cycles of cycles.h, when their routes are in place
 * (asked once per communicator, shared with SDN_MPI_Reduce's chains).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "allgather_algorithms.h"
#include "allgather_util.h"
#include "cycles.h"
#include "log.h"
#include "plan.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

static struct sdnmpi_blocks_coll coll = {"allgather", "PMPI_Allgather", PMPI_Allgather, 0};

SDNMPI_EXPORT int SDN_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    const struct sdnmpi_blocks_args args = {sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                             recvtype, comm};
    struct sdnmpi_blocks_view v;
    int rank = 0, rc = MPI_SUCCESS;
    if (sdnmpi_blocks_enter(&coll, &args, &v, &rc)
        || (rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || sdnmpi_blocks_agree(&coll, &args, &v, 0, &rc))
        return rc;
    const struct sdnmpi_plan *plan = v.plan;
    const struct sdnmpi_allgather_call call = {
        .sendblock = sendbuf == MPI_IN_PLACE ? (const char *)recvbuf + (size_t)rank * v.block
                                             : sendbuf,
        .recvbuf = recvbuf, .block = (size_t)v.block, .comm = plan->priv, .orig = v.orig,
        .dist = plan->rab_dist, .ndims = plan->rab_ndims, .leaf_start = plan->leaf_start,
        .nleaves = plan->nleaves,
    };
    sdnmpi_allgather_fn algorithm = sdnmpi_allgather_intra_ring;
    const char *name = "ring";
    coll.last_path = 3;
    int cycles = sdnmpi_cycles_use(plan, v.total, sdnmpi_g.cfg.allgather_cycles_min, &rc);
    if (rc != MPI_SUCCESS) {
        free(v.orig);
        return rc;
    }
    if (cycles) {
        algorithm = sdnmpi_allgather_intra_cycles;
        name = "two cycles";
        coll.last_path = 4;
    } else if ((v.p & (v.p - 1)) == 0 && (1 << plan->rab_ndims) == v.p) {
        algorithm = sdnmpi_allgather_intra_rd;
        name = "recursive doubling";
        coll.last_path = 2;
    }
    sdnmpi_log("allgather comm=%" PRId64 " block=%" PRIu64 " bytes=%" PRIu64 ": %s",
               plan->comm_id, v.block, v.total, name);
    rc = algorithm(&call);
    free(v.orig);
    return rc;
}

/* What the last SDN_MPI_Allgather did (sdnmpi_testing.h): 1 PMPI, 2 recursive doubling, 3 ring,
 * 4 two cycles. */
int sdnmpi_test_last_allgather(void)
{
    return coll.last_path;
}
