/* steps_plan.c -- asks the controller once per communicator and kind for an algorithm's steps
 * (steps_plan.h). */
#include "steps_plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "log.h"
#include "plan.h"
#include "rpc.h"
#include "sock.h"
#include "state.h"

struct steps_plan {
    int ok;
    int64_t comm_id;
};

static int plan_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    free(attr);
    return MPI_SUCCESS;
}

/* Rank 0 of priv: the request; 1 if the algorithm may run. */
static int leader_request(const struct sdnmpi_steps_kind *kind, const uint32_t *ips, int p,
                          const void *ctx, int64_t *comm_id)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_host_steps hs;
    *comm_id = -1;
    if (kind->build(ips, p, ctx, &hs) != 0) {
        sdnmpi_log("%s plan ranks=%d: out of memory, falling back", kind->name, p);
        return 0;
    }
    if (hs.npairs == 0) {
        sdnmpi_log("%s plan ranks=%d: all ranks on one host, no request needed", kind->name, p);
        sdnmpi_host_steps_free(&hs);
        return 1;
    }
    if (hs.nsteps > SDNMPI_RPC_MAX_STEPS || hs.npairs > SDNMPI_RPC_MAX_PAIRS) {
        sdnmpi_log("%s plan ranks=%d: %d steps, %zu pairs: more than a request may carry, "
                   "falling back", kind->name, p, hs.nsteps, hs.npairs);
        sdnmpi_host_steps_free(&hs);
        return 0;
    }
    struct sdnmpi_config cfg = s->cfg;
    if (cfg.planner[0] == '\0')
        snprintf(cfg.planner, sizeof cfg.planner, "%s", kind->default_planner);
    char why[256] = "";
    struct sdnmpi_rpc_reply reply = {0};
    int64_t t0 = sdnmpi_now_ms();
    if (pthread_mutex_lock(&s->lock) != 0) {
        sdnmpi_host_steps_free(&hs);
        sdnmpi_warn("%s plan: cannot lock the library state, falling back", kind->name);
        return 0;
    }
    *comm_id = sdnmpi_plan_next_comm_id_locked(0);
    int crc = sdnmpi_conn_open(&s->conn, &cfg, why, sizeof why);
    if (crc == SDNMPI_CTRL_OK)
        crc = sdnmpi_conn_plan(&s->conn, &cfg, &s->job, *comm_id, &hs, &reply, why, sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    double rtt = (double)(sdnmpi_now_ms() - t0) / 1000.0;
    if (crc == SDNMPI_CTRL_OK)
        sdnmpi_log("%s plan comm=%" PRId64 " ranks=%d steps=%d pairs=%zu planner=%s: ok "
                   "flows=%" PRId64 " in %.3fs", kind->name, *comm_id, p, hs.nsteps, hs.npairs,
                   cfg.planner, reply.flows, rtt);
    else
        sdnmpi_log("%s plan comm=%" PRId64 " ranks=%d steps=%d pairs=%zu: failed after "
                   "%.3fs (%s), falling back", kind->name, *comm_id, p, hs.nsteps, hs.npairs, rtt,
                   why);
    sdnmpi_host_steps_free(&hs);
    return crc == SDNMPI_CTRL_OK;
}

/* A kind's keyval, made at its first use; two threads' first calls of one kind at once must not
 * make two (each rank's attribute would then be lost on one of them, and the plan made again on
 * some ranks only). */
static int kind_keyval(struct sdnmpi_steps_kind *kind)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int rc = MPI_SUCCESS;
    if (pthread_mutex_lock(&lock) != 0)
        return MPI_ERR_OTHER;
    if (kind->keyval == MPI_KEYVAL_INVALID)
        rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, plan_delete, &kind->keyval, NULL);
    if (pthread_mutex_unlock(&lock) != 0 && rc == MPI_SUCCESS)
        rc = MPI_ERR_OTHER;
    return rc;
}

int sdnmpi_steps_plan_get(MPI_Comm priv, struct sdnmpi_steps_kind *kind, const void *ctx, int *ok,
                          int64_t *comm_id)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int rc, flag = 0, rank, p;
    void *val = NULL;
    *ok = 0;
    *comm_id = -1;
    if ((rc = kind_keyval(kind)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_get_attr(priv, kind->keyval, &val, &flag)) != MPI_SUCCESS)
        return rc;
    if (flag) {
        const struct steps_plan *plan = val;
        *ok = plan->ok;
        *comm_id = plan->comm_id;
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Comm_rank(priv, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(priv, &p)) != MPI_SUCCESS)
        return rc;
    struct steps_plan *plan = malloc(sizeof *plan);
    uint32_t *ips = rank == 0 ? malloc((size_t)p * sizeof *ips) : NULL;
    int local_ok = plan != NULL && (rank != 0 || ips != NULL), all_ok = 0;
    int64_t outcome[2] = {0, -1};
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, priv)) != MPI_SUCCESS
        || !all_ok) /* out of memory somewhere: not this call, try again next time */
        goto done;
    if ((rc = PMPI_Gather(&s->fabric_ip, 1, MPI_UINT32_T, ips, 1, MPI_UINT32_T, 0, priv))
        != MPI_SUCCESS)
        goto done;
    if (rank == 0)
        outcome[0] = leader_request(kind, ips, p, ctx, &outcome[1]);
    if ((rc = PMPI_Bcast(outcome, 2, MPI_INT64_T, 0, priv)) != MPI_SUCCESS)
        goto done;
    plan->ok = (int)outcome[0];
    plan->comm_id = outcome[1];
    if ((rc = PMPI_Comm_set_attr(priv, kind->keyval, plan)) != MPI_SUCCESS)
        goto done;
    *ok = plan->ok;
    *comm_id = plan->comm_id;
    plan = NULL; /* the attribute's now */
done:
    free(plan);
    free(ips);
    return rc;
}
