/* reduce.c -- SDN_MPI_Reduce: decides between the SDN algorithm and PMPI_Reduce.
 *
 * Every input of the decision is the same on all ranks of a valid call (count, datatype, op, root,
 * comm, the knobs agreed at SDN_MPI_Init, the plan), as in allreduce.c, so all ranks take the same
 * path without agreeing per call. The algorithm runs on the allreduce plan's private communicator
 * and routes (plan.h), with the root translated to its rank there.
 */
#include <inttypes.h>
#include <stdint.h>

#include "allgather_util.h"
#include "cycles.h"
#include "dtype.h"
#include "log.h"
#include "plan.h"
#include "reduce_algorithms.h"
#include "schedule.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

/* What the last SDN_MPI_Reduce did (sdnmpi_testing.h): 1 PMPI, 2 reduce-scatter + gather, 3 the
 * two chains. */
static int last_path;

int sdnmpi_test_last_reduce(void)
{
    return last_path;
}

static int fallback(const char *why, const void *sendbuf, void *recvbuf, int count,
                    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    last_path = 1;
    if (sdnmpi_g.initialized && !sdnmpi_g.finalized)
        sdnmpi_log("reduce count=%d root=%d: PMPI_Reduce (%s)", count, root, why);
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

/* The rank in `to` of rank r of `from` (same group). */
static int translate(MPI_Comm from, int r, MPI_Comm to, int *out)
{
    MPI_Group a = MPI_GROUP_NULL, b = MPI_GROUP_NULL;
    int rc;
    if ((rc = PMPI_Comm_group(from, &a)) == MPI_SUCCESS
        && (rc = PMPI_Comm_group(to, &b)) == MPI_SUCCESS)
        rc = PMPI_Group_translate_ranks(a, 1, &r, b, out);
    if (a != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&a); /* a leak at worst */
    if (b != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&b);
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    const char *why = sdnmpi_state_unavailable();
    int rc = MPI_SUCCESS;
#define FALLBACK(reason) fallback(reason, sendbuf, recvbuf, count, datatype, op, root, comm)

    if (why == NULL && (comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL
                        || op == MPI_OP_NULL || count < 0))
        why = "invalid argument"; /* PMPI_Reduce reports it */
    if (why != NULL)
        return FALLBACK(why);
    int inter = 0, p = 0;
    if ((rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return rc;
    if (inter)
        return FALLBACK("intercommunicator");
    if ((rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= p)
        return FALLBACK("invalid root");
    why = sdnmpi_dtype_unsupported(datatype, op, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (why != NULL)
        return FALLBACK(why);
    int size = 0, pof2, rem;
    MPI_Aint lb = 0, extent = 0;
    if ((rc = PMPI_Type_size(datatype, &size)) != MPI_SUCCESS
        || (rc = PMPI_Type_get_extent(datatype, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    uint64_t bytes = (uint64_t)count * (uint64_t)size;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    if (p == 1)
        return FALLBACK("one rank");
    if (count < pof2)
        return FALLBACK("fewer elements than ranks");
    if (bytes < sdnmpi_coll_min_bytes())
        return FALLBACK("below the minimum size (SDN_MPI_MIN_BYTES)");
    if (bytes > s->cfg.max_bytes)
        return FALLBACK("above SDN_MPI_MAX_BYTES");
    if (lb != 0 || extent < size)
        return FALLBACK("unusual datatype layout");

    const struct sdnmpi_plan *plan = NULL;
    if ((rc = sdnmpi_plan_get(comm, &plan)) != MPI_SUCCESS)
        return rc;
    if (!plan->ok)
        return FALLBACK("no SDN routes for this communicator");
    if ((1 << plan->rab_ndims) != pof2)
        return FALLBACK("no halving order");
    int proot = MPI_UNDEFINED;
    if ((rc = translate(comm, root, plan->priv, &proot)) != MPI_SUCCESS)
        return rc;
    const struct sdnmpi_reduce_call call = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .datatype = datatype,
        .extent = extent, .op = op, .root = proot, .comm = plan->priv, .dist = plan->rab_dist,
        .ndims = plan->rab_ndims, .leaf_start = plan->leaf_start, .nleaves = plan->nleaves,
        .segment = (size_t)s->cfg.reduce_segment,
    };
    /* the chains when large enough and their routes are in place, else on the plan's routes */
    int chains = sdnmpi_cycles_use(plan, bytes, s->cfg.reduce_chain_min, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (chains) {
        last_path = 3;
        sdnmpi_log("reduce comm=%" PRId64 " count=%d bytes=%" PRIu64 " root=%d: two chains, "
                   "segments of %zu elements", plan->comm_id, count, bytes, root,
                   sdnmpi_reduce_segment_elems((size_t)count, (size_t)extent, call.segment));
        return sdnmpi_reduce_intra_chain(&call);
    }
    last_path = 2;
    sdnmpi_log("reduce comm=%" PRId64 " count=%d bytes=%" PRIu64 " root=%d: reduce-scatter + gather",
               plan->comm_id, count, bytes, root);
    return sdnmpi_reduce_intra_redscat_gather(&call);
#undef FALLBACK
}
