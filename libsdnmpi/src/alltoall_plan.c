/* alltoall_plan.c -- asks the controller once per communicator for the pairwise exchange's
 * routes (alltoall_plan.h). */
#include "alltoall_plan.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall_sched.h"
#include "controller.h"
#include "log.h"
#include "plan.h"
#include "rpc.h"
#include "schedule.h"
#include "sock.h"
#include "state.h"

#define DEFAULT_PLANNER "sdn-optimal"

struct alltoall_plan {
    int ok;
    int64_t comm_id;
};

static int keyval = MPI_KEYVAL_INVALID; /* made on first use; lives as long as the process */

static int plan_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm, (void)kv, (void)extra;
    free(attr);
    return MPI_SUCCESS;
}

static int cmp_pair(const void *a, const void *b)
{
    const struct sdnmpi_host_pair *x = a, *y = b;
    uint32_t xs = ntohl(x->src), ys = ntohl(y->src), xd = ntohl(x->dst), yd = ntohl(y->dst);
    if (xs != ys)
        return xs < ys ? -1 : 1;
    return (xd > yd) - (xd < yd);
}

/* The exchange's steps as host pairs (same-host pairs dropped, duplicates counted). 0, or -1 out
 * of memory. */
static int build_steps(const uint32_t *ips, const struct sdnmpi_alltoall_sched *sc,
                       struct sdnmpi_host_steps *hs)
{
    const int p = sc->p;
    memset(hs, 0, sizeof *hs);
    hs->nsteps = p - 1;
    hs->start = malloc((size_t)p * sizeof *hs->start);
    hs->pairs = malloc(((size_t)p * (size_t)(p - 1) + 1) * sizeof *hs->pairs);
    if (hs->start == NULL || hs->pairs == NULL) {
        sdnmpi_host_steps_free(hs);
        return -1;
    }
    size_t n = 0;
    for (int k = 1; k < p; k++) {
        size_t first = n;
        hs->start[k - 1] = first;
        for (int q = 0; q < p; q++) {
            int to, from;
            sdnmpi_alltoall_sched_peer(sc, q, k, &to, &from);
            if (ips[q] != ips[to])
                hs->pairs[n++] = (struct sdnmpi_host_pair){ips[q], ips[to], 1};
        }
        qsort(hs->pairs + first, n - first, sizeof *hs->pairs, cmp_pair);
        size_t w = first;
        for (size_t i = first; i < n; i++) {
            if (w > first && hs->pairs[w - 1].src == hs->pairs[i].src
                && hs->pairs[w - 1].dst == hs->pairs[i].dst)
                hs->pairs[w - 1].count++;
            else
                hs->pairs[w++] = hs->pairs[i];
        }
        n = w;
    }
    hs->start[p - 1] = n;
    hs->npairs = n;
    return 0;
}

/* Rank 0 of priv: the request; 1 if the exchange may run. */
static int leader_request(const uint32_t *ips, const struct sdnmpi_alltoall_sched *sc,
                          int64_t *comm_id)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_host_steps hs;
    const int p = sc->p;
    *comm_id = -1;
    if (build_steps(ips, sc, &hs) != 0) {
        sdnmpi_log("alltoall plan ranks=%d: out of memory, falling back", p);
        return 0;
    }
    if (hs.npairs == 0) {
        sdnmpi_log("alltoall plan ranks=%d: all ranks on one host, no request needed", p);
        sdnmpi_host_steps_free(&hs);
        return 1;
    }
    if (hs.nsteps > SDNMPI_RPC_MAX_STEPS || hs.npairs > SDNMPI_RPC_MAX_PAIRS) {
        sdnmpi_log("alltoall plan ranks=%d: %d steps, %zu pairs: more than a request may carry, "
                   "falling back", p, hs.nsteps, hs.npairs);
        sdnmpi_host_steps_free(&hs);
        return 0;
    }
    struct sdnmpi_config cfg = s->cfg;
    if (cfg.planner[0] == '\0')
        memcpy(cfg.planner, DEFAULT_PLANNER, sizeof DEFAULT_PLANNER);
    char why[256] = "";
    struct sdnmpi_rpc_reply reply = {0};
    int64_t t0 = sdnmpi_now_ms();
    if (pthread_mutex_lock(&s->lock) != 0) {
        sdnmpi_host_steps_free(&hs);
        sdnmpi_warn("alltoall plan: cannot lock the library state, falling back");
        return 0;
    }
    *comm_id = sdnmpi_plan_next_comm_id_locked(0);
    int crc = sdnmpi_conn_open(&s->conn, &cfg, why, sizeof why);
    if (crc == SDNMPI_CTRL_OK)
        crc = sdnmpi_conn_plan(&s->conn, &cfg, &s->job, *comm_id, &hs, &reply, why, sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    double rtt = (double)(sdnmpi_now_ms() - t0) / 1000.0;
    if (crc == SDNMPI_CTRL_OK)
        sdnmpi_log("alltoall plan comm=%" PRId64 " ranks=%d steps=%d pairs=%zu planner=%s: ok "
                   "flows=%" PRId64 " in %.3fs", *comm_id, p, hs.nsteps, hs.npairs, cfg.planner,
                   reply.flows, rtt);
    else
        sdnmpi_log("alltoall plan comm=%" PRId64 " ranks=%d steps=%d pairs=%zu: failed after "
                   "%.3fs (%s), falling back", *comm_id, p, hs.nsteps, hs.npairs, rtt, why);
    sdnmpi_host_steps_free(&hs);
    return crc == SDNMPI_CTRL_OK;
}

int sdnmpi_alltoall_plan_get(MPI_Comm priv, const struct sdnmpi_alltoall_sched *sc, int *ok,
                             int64_t *comm_id)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int rc, flag = 0, rank, p;
    void *val = NULL;
    *ok = 0;
    *comm_id = -1;
    if (keyval == MPI_KEYVAL_INVALID
        && (rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, plan_delete, &keyval, NULL))
               != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_get_attr(priv, keyval, &val, &flag)) != MPI_SUCCESS)
        return rc;
    if (flag) {
        const struct alltoall_plan *plan = val;
        *ok = plan->ok;
        *comm_id = plan->comm_id;
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Comm_rank(priv, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(priv, &p)) != MPI_SUCCESS)
        return rc;
    struct alltoall_plan *plan = malloc(sizeof *plan);
    uint32_t *ips = rank == 0 ? malloc((size_t)p * sizeof *ips) : NULL;
    int local_ok = plan != NULL && (rank != 0 || ips != NULL), all_ok = 0;
    int64_t outcome[2] = {0, -1};
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, priv)) != MPI_SUCCESS
        || !all_ok) /* out of memory somewhere: PMPI for this call, try again next time */
        goto done;
    if ((rc = PMPI_Gather(&s->fabric_ip, 1, MPI_UINT32_T, ips, 1, MPI_UINT32_T, 0, priv))
        != MPI_SUCCESS)
        goto done;
    if (rank == 0)
        outcome[0] = leader_request(ips, sc, &outcome[1]);
    if ((rc = PMPI_Bcast(outcome, 2, MPI_INT64_T, 0, priv)) != MPI_SUCCESS)
        goto done;
    plan->ok = (int)outcome[0];
    plan->comm_id = outcome[1];
    if ((rc = PMPI_Comm_set_attr(priv, keyval, plan)) != MPI_SUCCESS)
        goto done;
    *ok = plan->ok;
    *comm_id = plan->comm_id;
    plan = NULL; /* the attribute's now */
done:
    free(plan);
    free(ips);
    return rc;
}
