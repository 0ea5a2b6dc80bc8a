/* allreduce.c -- SDN_MPI_Allreduce: decides between the SDN algorithms and PMPI_Allreduce.
 *
 * Every input of the decision is the same on all ranks of a valid collective call (count,
 * datatype, op, comm, the knobs agreed at SDN_MPI_Init, the plan broadcast by the communicator's
 * rank 0), so all ranks take the same path; anything else would deadlock.
 */
#include <inttypes.h>
#include <stdint.h>
#include "allreduce_algorithms.h"
#include "dtype.h"
#include "hier_layout.h"
#include "log.h"
#include "plan.h"
#include "reconnect.h"
#include "schedule.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

/* sdnmpi_test_force_allreduce's algorithm (an enum sdnmpi_path), 0 = the selection rule. */
static int forced_path;

int sdnmpi_test_force_allreduce(int path)
{
    if (path != 0 && path != SDNMPI_PATH_PMPI && path != SDNMPI_PATH_RD && path != SDNMPI_PATH_RAB
        && path != SDNMPI_PATH_HIER)
        return -1;
    forced_path = path;
    return 0;
}

/* sdnmpi_test_hier_depth's depth, 0 = SDN_MPI_HIER_DEPTH's (its 0: SDNMPI_HIER_DEFAULT_DEPTH). */
static int forced_depth;

int sdnmpi_test_hier_depth(int depth)
{
    if (depth < 0 || depth > SDNMPI_HIER_MAX_DEPTH)
        return -1;
    forced_depth = depth;
    return 0;
}

/* sdnmpi_test_hier_segment's bytes, 0 = the communicator leader's SDN_MPI_HIER_SEGMENT (unset:
 * by the leaf layout, sdnmpi_hier_segment_bytes). */
static size_t forced_segment;

int sdnmpi_test_hier_segment(size_t bytes)
{
    forced_segment = bytes;
    return 0;
}

/* The selection rule (bench/README.md, "Allreduce: the selection rule"): the hierarchical
 * algorithm from the communicator leader's SDN_MPI_HIER_MIN bytes on when the ranks span two or
 * more leaves and no leaf holds more than twice as many as the smallest (at most one fold step,
 * hier_layout.h), else Rabenseifner from SDN_MPI_RABENSEIFNER_MIN on, else recursive doubling.
 * Every input is the same on all ranks. Forcing the hierarchical algorithm takes any layout. */
static int choose(const struct sdnmpi_plan *plan, int p, int count, uint64_t bytes)
{
    struct sdnmpi_hier_layout lay;
    int fits = sdnmpi_allreduce_hier_fits(p, plan->leaf_start, plan->nleaves);
    int hier = fits && sdnmpi_hier_layout_init(&lay, plan->leaf_start, plan->nleaves)
               && lay.folds <= 1;
    int rab = p > 1 && sdnmpi_allreduce_rab_fits(p, count, plan->rab_ndims);
    if ((forced_path == SDNMPI_PATH_HIER && fits) || (forced_path == SDNMPI_PATH_RAB && rab)
        || forced_path == SDNMPI_PATH_RD)
        return forced_path;
    if (hier && bytes >= plan->hier_min)
        return SDNMPI_PATH_HIER;
    if (rab && bytes >= sdnmpi_g.cfg.rab_min)
        return SDNMPI_PATH_RAB;
    return SDNMPI_PATH_RD;
}

static int fallback(const char *why, int count, const void *sendbuf, void *recvbuf,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    sdnmpi_g.last_path = SDNMPI_PATH_PMPI;
    if (sdnmpi_g.initialized && !sdnmpi_g.finalized)
        sdnmpi_log("allreduce count=%d: PMPI_Allreduce (%s)", count, why);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

SDNMPI_EXPORT int SDN_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    const char *why = sdnmpi_state_unavailable();
    int rc = MPI_SUCCESS;

    if (why == NULL && (comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL
                        || op == MPI_OP_NULL || count < 0))
        why = "invalid argument"; /* PMPI_Allreduce reports it */
    if (why != NULL)
        return fallback(why, count, sendbuf, recvbuf, datatype, op, comm);

    int inter = 0;
    if ((rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return rc;
    if (inter)
        return fallback("intercommunicator", count, sendbuf, recvbuf, datatype, op, comm);
    why = sdnmpi_dtype_unsupported(datatype, op, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (why != NULL)
        return fallback(why, count, sendbuf, recvbuf, datatype, op, comm);

    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    if ((rc = PMPI_Type_size(datatype, &size)) != MPI_SUCCESS
        || (rc = PMPI_Type_get_extent(datatype, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    uint64_t bytes = (uint64_t)count * (uint64_t)size;
    if (forced_path == SDNMPI_PATH_PMPI)
        return fallback("forced by the test hook", count, sendbuf, recvbuf, datatype, op, comm);
    /* A forced algorithm is timed or tested where the rule would fall back by size. */
    if (forced_path == 0
        && bytes < sdnmpi_cfg_min_bytes(&s->cfg, SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES))
        return fallback("below the minimum size (SDN_MPI_MIN_BYTES)", count, sendbuf, recvbuf,
                        datatype, op, comm);
    if (bytes > s->cfg.max_bytes)
        return fallback("above SDN_MPI_MAX_BYTES", count, sendbuf, recvbuf, datatype, op, comm);
    if ((rc = sdnmpi_reconnect_point(comm)) != MPI_SUCCESS)
        return rc;
    if (lb != 0 || extent < size)
        return fallback("unusual datatype layout", count, sendbuf, recvbuf, datatype, op, comm);

    const struct sdnmpi_plan *plan = NULL;
    if ((rc = sdnmpi_plan_get(comm, &plan)) != MPI_SUCCESS)
        return rc;
    if (!plan->ok)
        return fallback("no SDN routes for this communicator", count, sendbuf, recvbuf, datatype,
                        op, comm);
    if (count == 0) {
        s->last_path = SDNMPI_PATH_EMPTY;
        sdnmpi_log("allreduce comm=%" PRId64 " count=0: nothing to do", plan->comm_id);
        return MPI_SUCCESS;
    }

    int p = 0;
    if ((rc = PMPI_Comm_size(plan->priv, &p)) != MPI_SUCCESS)
        return rc;
    const struct sdnmpi_allreduce_call call = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .datatype = datatype,
        .extent = extent, .op = op, .comm = plan->priv, .dist = plan->rab_dist,
        .ndims = plan->rab_ndims, .leaf_start = plan->leaf_start, .nleaves = plan->nleaves,
        .segment = forced_segment ? forced_segment
                   : plan->hier_segment == SDNMPI_HIER_SEGMENT_BY_LAYOUT
                       ? sdnmpi_hier_segment_bytes(plan->leaf_start, plan->nleaves)
                   : plan->hier_segment > SIZE_MAX ? 0 : (size_t)plan->hier_segment,
        .depth = forced_depth ? forced_depth : s->cfg.hier_depth,
        .trace = s->cfg.hier_trace[0] ? s->cfg.hier_trace : NULL,
    };
    sdnmpi_allreduce_fn algorithm = sdnmpi_allreduce_intra_rd;
    const char *name = "recursive doubling";
    s->last_path = choose(plan, p, count, bytes);
    if (s->last_path == SDNMPI_PATH_RAB) {
        algorithm = sdnmpi_allreduce_intra_rabenseifner;
        name = "Rabenseifner";
    } else if (s->last_path == SDNMPI_PATH_HIER) {
        algorithm = sdnmpi_allreduce_intra_hier;
        name = "hierarchical";
    }
    if (s->last_path == SDNMPI_PATH_HIER) {
        int segcount, nseg = sdnmpi_hier_segments(count, extent, call.segment, &segcount);
        sdnmpi_log("allreduce comm=%" PRId64 " count=%d bytes=%" PRIu64 ": %s, %d segments of %d elements",
                   plan->comm_id, count, bytes, name, nseg, segcount);
    } else {
        sdnmpi_log("allreduce comm=%" PRId64 " count=%d bytes=%" PRIu64 ": %s", plan->comm_id,
                   count, bytes, name);
    }
    return algorithm(&call);
}
