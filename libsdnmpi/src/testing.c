/* testing.c -- hooks for libsdnmpi's own tests (sdnmpi_testing.h); not part of the API. */
#include "allreduce_algorithms.h"
#include "controller.h"
#include "log.h"
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

/* Hidden (not SDNMPI_EXPORT), as those below. */
int sdnmpi_test_plan_priv(MPI_Comm comm)
{
    void *val = NULL;
    int flag = 0;
    if (sdnmpi_g.keyval == MPI_KEYVAL_INVALID
        || PMPI_Comm_get_attr(comm, sdnmpi_g.keyval, &val, &flag) != MPI_SUCCESS || !flag)
        return -1;
    return ((const struct sdnmpi_plan *)val)->priv_from;
}

/* Hidden (not SDNMPI_EXPORT): the shared libraries export only the API and the hook above (and the
 * preload library sdnmpi_test_libworld_pending, preload_comm.c). */
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
    return sdnmpi_g.agree_steps && SDNMPI_AGREE_AT(sdnmpi_g.world_calls);
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

/* The floor's controller round trip: a connection of its own (never the job's), connect, hello,
 * close. */
int sdnmpi_test_ctrl_hello(double *connect_s, double *hello_s)
{
    struct sdnmpi_conn c;
    char why[256] = "";
    sdnmpi_conn_init(&c);
    double t0 = sdnmpi_clock();
    int rc = sdnmpi_conn_connect(&c, &sdnmpi_g.cfg, why, sizeof why);
    double t1 = sdnmpi_clock();
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_conn_hello(&c, &sdnmpi_g.cfg, why, sizeof why);
    double t2 = sdnmpi_clock();
    sdnmpi_conn_close(&c);
    *connect_s = t1 - t0;
    *hello_s = t2 - t1;
    if (rc != SDNMPI_CTRL_OK)
        sdnmpi_log("test: controller hello failed (%s)", why);
    return rc == SDNMPI_CTRL_OK ? 0 : -1;
}

void sdnmpi_test_wire_bytes(size_t *init_agreement, size_t *plan_outcome)
{
    *init_agreement = sdnmpi_init_agreement_bytes();
    *plan_outcome = sdnmpi_plan_outcome_bytes();
}
