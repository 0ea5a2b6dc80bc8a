/* alltoall_plan.c -- asks the controller once per communicator for the pairwise exchange's
 * routes (alltoall_plan.h), through steps_plan.h. */
#include "alltoall_plan.h"

#include <string.h>

#include "alltoall_sched.h"
#include "schedule.h"
#include "steps_plan.h"

/* Step s (0 .. p-2) of the exchange, its step k = s + 1: every rank q sends to its peer. */
static int exchange_pairs(const void *ctx, int s, int *src, int *dst)
{
    const struct sdnmpi_alltoall_sched *sc = ctx;
    for (int q = 0; q < sc->p; q++) {
        int from;
        src[q] = q;
        sdnmpi_alltoall_sched_peer(sc, q, s + 1, &dst[q], &from);
    }
    return sc->p;
}

/* The exchange's p - 1 steps as host pairs (sdnmpi_host_steps_from: same-host pairs dropped,
 * duplicates counted, each step sorted by dotted quads; the order carries no meaning, the
 * controller merges and sorts a step's pairs itself, controller/rpc_schema.py); ctx is the
 * schedule, sc->p == p (steps_plan.h's build). 0, or -1 out of memory. */
static int build_steps(const uint32_t *ips, int p, const void *ctx, struct sdnmpi_host_steps *hs)
{
    const struct sdnmpi_alltoall_sched *sc = ctx;
    if (sc->p != p) {
        memset(hs, 0, sizeof *hs);
        return -1;
    }
    size_t all = (size_t)p * (size_t)(p - 1); /* every rank pair once: no limit */
    int rc = sdnmpi_host_steps_from(p, p - 1, p, exchange_pairs, sc, ips, all, hs);
    return rc == SDNMPI_STEPS_OK ? 0 : -1;
}

static struct sdnmpi_steps_kind kind = {"alltoall", "sdn-optimal", build_steps, MPI_KEYVAL_INVALID};

int sdnmpi_alltoall_plan_get(MPI_Comm priv, const struct sdnmpi_alltoall_sched *sc, int *ok,
                             int64_t *comm_id)
{
    if (sc->p < 1)
        return MPI_ERR_ARG;
    return sdnmpi_steps_plan_get(priv, &kind, sc, ok, comm_id);
}
