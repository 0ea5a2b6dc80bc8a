/* testing.c -- hooks for libsdnmpi's own tests (sdnmpi_testing.h); not part of the API. */
#include "allreduce_algorithms.h"
#include "plan.h"
#include "reconnect.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"
#include "timing.h"

SDNMPI_EXPORT int sdnmpi_test_last_path(void)
{
    return sdnmpi_g.last_path;
}

/* Hidden (not SDNMPI_EXPORT): the shared libraries export only the API and the hook above. */
int sdnmpi_test_last_bcast(int *rounds, long long *resent, long long *finished)
{
    const struct sdnmpi_bcast_stats *st = &sdnmpi_g.last_bcast;
    if (rounds != NULL)
        *rounds = st->rounds;
    if (resent != NULL)
        *resent = st->resent;
    if (finished != NULL)
        *finished = st->finished;
    return st->path;
}

size_t sdnmpi_test_timings(const char **names, double *values, size_t cap)
{
    return sdnmpi_timing_get(names, values, cap);
}

int sdnmpi_test_agree_next(void)
{
    return sdnmpi_g.world_calls % SDNMPI_AGREE_EVERY == 0;
}

/* Recursive doubling on comm's cached plan: what SDN_MPI_Allreduce runs for a small message, minus
 * everything around it (checks, the reconnect point, the plan lookup, the controller). */
int sdnmpi_test_allreduce_direct(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    void *val = NULL;
    int flag = 0;
    MPI_Aint lb = 0, extent = 0;
    int rc = PMPI_Comm_get_attr(comm, sdnmpi_g.keyval, &val, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    const struct sdnmpi_plan *plan = val;
    if (!flag || !plan->ok || count <= 0)
        return MPI_ERR_OTHER;
    if ((rc = PMPI_Type_get_extent(datatype, &lb, &extent)) != MPI_SUCCESS)
        return rc;
    const struct sdnmpi_allreduce_call call = {
        .sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .datatype = datatype,
        .extent = extent, .op = op, .comm = plan->priv, .dist = plan->rab_dist,
        .ndims = plan->rab_ndims,
    };
    return sdnmpi_allreduce_intra_rd(&call);
}
