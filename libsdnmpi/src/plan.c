/* plan.c -- asks the controller for a communicator's routes once, caches the answer (plan.h). */
#include "plan.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commattr.h"
#include "controller.h"
#include "hier_layout.h"
#include "log.h"
#include "plan_ahead.h"
#include "plan_comm.h"
#include "plan_leader.h"
#include "rpc.h"
#include "schedule.h"
#include "sock.h"
#include "state.h"
#include "timing.h"

static int plan_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    struct sdnmpi_plan *plan = attr;
    if (plan->priv != MPI_COMM_NULL && plan->priv_from != SDNMPI_PRIV_LIBWORLD) {
        /* During MPI_Finalize's own teardown of leaked communicators MPI is past freeing
         * anything; it reclaims the duplicate itself. */
        int finalized = 1;
        if (PMPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
            (void)PMPI_Comm_free(&plan->priv); /* nothing to do about a failure here */
    }
    free(plan->leaf_start);
    free(plan);
    return MPI_SUCCESS;
}

int sdnmpi_plan_keyval_create(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, plan_delete, &sdnmpi_g.keyval, NULL);
}

int sdnmpi_plan_keyval_free(void)
{
    return sdnmpi_commattr_keyval_free(&sdnmpi_g.keyval);
}

static void format_loads(const struct sdnmpi_rpc_reply *r, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->n_max_load && i < SDNMPI_RPC_MAX_LOADS && used + 24 < len; i++) {
        int n = snprintf(out + used, len - used, "%s%" PRId64, i ? "," : "", r->max_load[i]);
        if (n < 0)
            return;
        used += (size_t)n;
    }
    if (r->n_max_load > SDNMPI_RPC_MAX_LOADS && used + 4 < len)
        snprintf(out + used, len - used, ",...");
}

static void format_order(const int *dist, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used + 16 < len; i++) {
        int k = snprintf(out + used, len - used, "%s%d", i ? "," : "", dist[i]);
        if (k < 0)
            return;
        used += (size_t)k;
    }
}

int64_t sdnmpi_plan_next_comm_id_locked(int is_world)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    return is_world ? SDNMPI_WORLD_COMM_ID : 1 + s->world_rank + (int64_t)s->world_size * s->comms_led++;
}

/* Rank 0 of the communicator: the request (leaf layout: leaf_start, nleaves, 0 if unknown).
 * Returns 1 if the SDN algorithms may run; then dist[0..*ndims) is Rabenseifner's halving order. */
static int leader_request(MPI_Comm comm, const uint32_t *ips, int p, const int *leaf_start,
                          int nleaves, int64_t *comm_id, int *dist, int *ndims)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_host_steps hs;
    int hosts = sdnmpi_count_hosts(ips, p), is_world = comm == MPI_COMM_WORLD;
    *comm_id = -1;
    int rc = sdnmpi_plan_leader_steps(ips, p, leaf_start, nleaves, &hs);
    if (rc != SDNMPI_STEPS_OK) {
        sdnmpi_log("plan ranks=%d hosts=%d: %s, falling back", p, hosts,
                   rc == SDNMPI_STEPS_TOO_MANY ? "more host pairs than a request may carry"
                                               : "out of memory");
        return 0;
    }
    *ndims = sdnmpi_rab_order(p, ips, NULL, 0, dist);
    if (hs.npairs == 0) {
        sdnmpi_log("plan ranks=%d hosts=%d: all ranks on one host, no request needed", p, hosts);
        sdnmpi_host_steps_free(&hs);
        return 1;
    }
    if (hs.nsteps > SDNMPI_RPC_MAX_STEPS) {
        sdnmpi_log("plan ranks=%d: %d steps is more than a request may carry, falling back", p,
                   hs.nsteps);
        sdnmpi_host_steps_free(&hs);
        return 0;
    }
    char why[256] = "";
    struct sdnmpi_rpc_reply reply = {0};
    int ok = 0;
    int64_t t0 = sdnmpi_now_ms();
    double tc = sdnmpi_clock();
    if (pthread_mutex_lock(&s->lock) != 0) {
        sdnmpi_host_steps_free(&hs);
        sdnmpi_warn("plan: cannot lock the library state, falling back");
        return 0;
    }
    /* the request sent ahead (at Init, at the communicator's creation), if it is this one, or the
     * routes of the same group's plan; else ask now */
    int crc = sdnmpi_plan_ahead_take_locked(comm, &hs, comm_id, dist, ndims, &reply, why,
                                            sizeof why);
    const char *ahead = crc == SDNMPI_AHEAD_NONE             ? ""
                        : *comm_id == SDNMPI_WORLD_COMM_ID ? ", sent ahead at Init"
                                                           : ", sent ahead at creation";
    if (crc == SDNMPI_AHEAD_REUSED) {
        (void)pthread_mutex_unlock(&s->lock);
        sdnmpi_timing_set(SDNMPI_T_PLAN_REQUEST, 0.0);
        sdnmpi_log("plan comm=%" PRId64 " ranks=%d hosts=%d steps=%d pairs=%zu: ok, the routes "
                   "of the same group's plan (no request)", *comm_id, p, hosts, hs.nsteps,
                   hs.npairs);
        sdnmpi_host_steps_free(&hs);
        return 1;
    }
    if (crc == SDNMPI_AHEAD_NONE) {
        *comm_id = sdnmpi_plan_next_comm_id_locked(is_world);
        crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
        if (crc == SDNMPI_CTRL_OK)
            crc = sdnmpi_conn_plan(&s->conn, &s->cfg, &s->job, *comm_id, &hs, &reply, why,
                                   sizeof why);
    }
    (void)pthread_mutex_unlock(&s->lock);
    double rtt = (double)(sdnmpi_now_ms() - t0) / 1000.0;
    sdnmpi_timing_set(SDNMPI_T_PLAN_REQUEST, sdnmpi_clock() - tc);
    sdnmpi_timing_set(SDNMPI_T_PLAN_CTRL, crc == SDNMPI_CTRL_OK ? reply.total_s : -1.0);
    sdnmpi_timing_set(SDNMPI_T_PLAN_CTRL_PLAN, crc == SDNMPI_CTRL_OK ? reply.plan_s : -1.0);
    sdnmpi_timing_set(SDNMPI_T_PLAN_CTRL_INSTALL, crc == SDNMPI_CTRL_OK ? reply.install_s : -1.0);
    if (crc == SDNMPI_CTRL_OK) {
        char loads[160], order[160];
        size_t nloads = reply.n_max_load < SDNMPI_RPC_MAX_LOADS ? reply.n_max_load
                                                                : SDNMPI_RPC_MAX_LOADS;
        *ndims = sdnmpi_rab_order(p, ips, reply.max_load, nloads, dist);
        format_loads(&reply, loads, sizeof loads);
        format_order(dist, *ndims, order, sizeof order);
        sdnmpi_log("plan comm=%" PRId64 " ranks=%d hosts=%d steps=%d pairs=%zu: ok flows=%" PRId64
                   " max_load=[%s] halving=[%s] in %.3fs (controller total %.3fs plan %.3fs "
                   "install %.3fs%s)",
                   *comm_id, p, hosts, hs.nsteps, hs.npairs, reply.flows, loads, order, rtt,
                   reply.total_s, reply.plan_s, reply.install_s, ahead);
        ok = 1;
    } else {
        sdnmpi_log("plan comm=%" PRId64 " ranks=%d hosts=%d steps=%d pairs=%zu: failed after "
                   "%.3fs (%s%s), falling back",
                   *comm_id, p, hosts, hs.nsteps, hs.npairs, rtt, why, ahead);
    }
    sdnmpi_host_steps_free(&hs);
    return ok;
}

/* The plan just made: its whole time on this rank, and (on the leader) what was not RPC. */
static void record_plan_time(double t_start, int64_t x0)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    double total = sdnmpi_clock() - t_start;
    double rpc = s->timing[SDNMPI_T_PLAN_LOCATE] + s->timing[SDNMPI_T_PLAN_REQUEST];
    sdnmpi_timing_set(SDNMPI_T_PLAN, total);
    sdnmpi_timing_set(SDNMPI_T_PLAN_MPI, total - rpc);
    sdnmpi_timing_set(SDNMPI_T_PLAN_RTTS, (double)(s->conn.exchanges - x0));
}

/* Returned, uncached, when some rank could not allocate: every rank then falls back for this
 * call and tries again on the next one. */
static const struct sdnmpi_plan no_plan = {0, MPI_COMM_NULL, 0, -1, 0, {0}, NULL, 0, 0, 0, 0};

/* What rank 0 decides and every rank needs: combined with a bitwise-or Allreduce, to which every
 * other rank adds only its out-of-memory flag (so the one collective is also the agreement). */
enum {
    OUT_FAIL,                            /* some rank is out of memory: no plan this time */
    OUT_OK,                              /* the SDN algorithms may run */
    OUT_ID,                              /* the comm id */
    OUT_MOVED,                           /* the private communicator's order is not comm's */
    OUT_NDIMS,                           /* Rabenseifner's distances: how many, then them */
    OUT_DIST,
    OUT_LAYOUT = OUT_DIST + SDNMPI_RD_MAX_DIMS, /* the number of leaves, and the leader's */
    OUT_NOLIB = OUT_LAYOUT + 3,          /* SDN_MPI_HIER_MIN and SDN_MPI_HIER_SEGMENT; then: some
                                            rank has no library communicator (plan_comm.h) */
    OUT_TAG,                             /* the private communicator's creation tag */
    OUT_N
};

size_t sdnmpi_plan_outcome_bytes(void)
{
    return OUT_N * sizeof(int64_t);
}

/* Rank 0 of comm: the order, the leaf layout (leaf_start, p + 1 entries), the request, and the
 * outcome (OUT_*) into out. */
static int leader_decide(MPI_Comm comm, int p, uint32_t *ips, uint32_t *ordered, int *pos,
                         int *leaf_start, int *world, int64_t out[OUT_N])
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int all_in = 0, rc = sdnmpi_comm_world_ranks(comm, p, world, &all_in);
    if (rc != MPI_SUCCESS)
        return rc;
    out[OUT_ID] = -1;
    for (int r = 0; r < p; r++)
        pos[r] = r;
    if (!all_in) {
        sdnmpi_log("plan ranks=%d: a rank outside MPI_COMM_WORLD, falling back", p);
        return MPI_SUCCESS;
    }
    for (int r = 0; r < p; r++)
        ips[r] = s->world_ips[world[r]];
    int dist[SDNMPI_RD_MAX_DIMS], ndims = 0, nleaves = 0;
    if (sdnmpi_plan_ahead_order(comm, p, pos, leaf_start, &nleaves) != 0) /* none ahead */
        (void)sdnmpi_plan_leader_order(ips, world, p, 0, pos, leaf_start, &nleaves); /* 0 always */
    out[OUT_LAYOUT] = nleaves;
    out[OUT_LAYOUT + 1] = (int64_t)s->cfg.hier_min;
    out[OUT_LAYOUT + 2] = (int64_t)s->cfg.hier_segment;
    for (int r = 0; r < p; r++) {
        ordered[pos[r]] = ips[r];
        out[OUT_MOVED] |= pos[r] != r;
    }
    out[OUT_OK] = leader_request(comm, ordered, p, leaf_start, nleaves, &out[OUT_ID], dist, &ndims);
    out[OUT_NDIMS] = ndims;
    for (int i = 0; i < ndims; i++)
        out[OUT_DIST + i] = dist[i];
    return MPI_SUCCESS;
}

/* Makes and caches the plan of comm (collective): one Allreduce (the outcome, and the agreement
 * that every rank has its memory and the library's communicator), the private communicator
 * (plan_comm.h: nothing to make for the world in its own order; else, if the leader reordered the
 * ranks, a Bcast of the order and a group's creation on the library's communicator), and a Bcast
 * of the leaf layout if the leader knows it. Without the library's communicator on every rank:
 * a Scatter of the new positions if reordered, and the split of comm, as before plan_comm.h
 * (Open MPI 4.1.4 may hang that split while an MPI_Comm_idup of comm is pending;
 * libsdnmpi/README.md, "Known issues"). */
static int plan_create(MPI_Comm comm, const struct sdnmpi_plan **out)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    MPI_Comm priv = MPI_COMM_NULL;
    struct sdnmpi_plan *plan = NULL;
    uint32_t *ips = NULL, *ordered = NULL;
    int *pos = NULL, *world = NULL, *leaf_start = NULL, *order = NULL;
    int rank, p, rc, mypos, shared = 0;
    int64_t mine[OUT_N] = {0}, outcome[OUT_N] = {0};

    double t_start = sdnmpi_clock();
    (void)sdnmpi_plan_comm_ready(); /* deferred (plan_comm.h): complete it; a failure leaves none */
    int lib = s->libworld != MPI_COMM_NULL;
    int64_t x0 = s->conn.exchanges;
    sdnmpi_timing_set(SDNMPI_T_PLAN_LOCATE, 0.0);
    sdnmpi_timing_set(SDNMPI_T_PLAN_REQUEST, 0.0);
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD, 0.0);
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD_AGE, -1.0);
    for (int k = SDNMPI_T_PLAN_CTRL; k <= SDNMPI_T_PLAN_CTRL_INSTALL; k++)
        sdnmpi_timing_set((enum sdnmpi_tslot)k, -1.0);
    for (int k = SDNMPI_T_PLAN_DECIDE; k <= SDNMPI_T_PLAN_LAYOUT; k++)
        sdnmpi_timing_set((enum sdnmpi_tslot)k, 0.0);
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    mypos = rank;
    plan = calloc(1, sizeof *plan);
    leaf_start = calloc((size_t)p + 1, sizeof *leaf_start); /* every rank: the layout's Bcast */
    if (lib) /* every rank: the order's Bcast, then the group's */
        order = malloc((size_t)p * 2 * sizeof *order);
    if (rank == 0) {
        ips = malloc((size_t)p * sizeof *ips);
        ordered = malloc((size_t)p * sizeof *ordered);
        pos = malloc((size_t)p * sizeof *pos);
        world = malloc((size_t)p * sizeof *world);
    }
    mine[OUT_FAIL] = plan == NULL || leaf_start == NULL || (lib && order == NULL)
                     || (rank == 0 && (ips == NULL || ordered == NULL || pos == NULL || world == NULL));
    mine[OUT_NOLIB] = !lib;
    if (rank == 0 && !mine[OUT_FAIL]
        && (rc = leader_decide(comm, p, ips, ordered, pos, leaf_start, world, mine)) != MPI_SUCCESS)
        mine[OUT_FAIL] = 1; /* the others must not wait for a leader that gave up */
    if (rank == 0 && !mine[OUT_FAIL] && mine[OUT_OK] && lib) {
        if (pthread_mutex_lock(&s->lock) == 0) {
            mine[OUT_TAG] = sdnmpi_plan_comm_tag_locked();
            (void)pthread_mutex_unlock(&s->lock);
        } else {
            mine[OUT_NOLIB] = 1; /* no tag: split, as without the library's communicator */
        }
    }
    double ts = sdnmpi_timing_step(SDNMPI_T_PLAN_DECIDE, t_start);
    int arc = PMPI_Allreduce(mine, outcome, OUT_N, MPI_INT64_T, MPI_BOR, comm);
    ts = sdnmpi_timing_step(SDNMPI_T_PLAN_ALLREDUCE, ts);
    if (rc == MPI_SUCCESS)
        rc = arc;
    if (rc != MPI_SUCCESS)
        goto fail;
    if (outcome[OUT_FAIL]) {
        if (rank == 0)
            sdnmpi_log("plan ranks=%d: out of memory on some rank, falling back for this call", p);
        free(plan);
        plan = NULL;
        *out = &no_plan;
        goto done;
    }
    int use_lib = !outcome[OUT_NOLIB];
    if (outcome[OUT_OK] && outcome[OUT_MOVED] && use_lib) { /* every rank: the whole order */
        int *all = rank == 0 ? pos : order + p;
        if ((rc = PMPI_Bcast(all, p, MPI_INT, 0, comm)) != MPI_SUCCESS)
            goto fail;
        for (int r = 0; r < p; r++)
            order[all[r] >= 0 && all[r] < p ? all[r] : r] = r; /* the leader's is a permutation */
        ts = sdnmpi_timing_step(SDNMPI_T_PLAN_SCATTER, ts);
    } else if (outcome[OUT_OK] && outcome[OUT_MOVED]) {
        if ((rc = PMPI_Scatter(pos, 1, MPI_INT, &mypos, 1, MPI_INT, 0, comm)) != MPI_SUCCESS)
            goto fail;
        ts = sdnmpi_timing_step(SDNMPI_T_PLAN_SCATTER, ts);
    }
    if (outcome[OUT_OK] && use_lib)
        rc = sdnmpi_plan_comm_make(comm, p, outcome[OUT_MOVED] ? order : NULL,
                                   (int)outcome[OUT_TAG], &priv, &shared);
    else if (outcome[OUT_OK])
        rc = PMPI_Comm_split(comm, 0, mypos, &priv);
    if (rc != MPI_SUCCESS)
        goto fail;
    ts = sdnmpi_timing_step(SDNMPI_T_PLAN_SPLIT, ts);
    int nleaves = (int)outcome[OUT_LAYOUT];
    if (outcome[OUT_OK] && nleaves > 0 && nleaves <= p) {
        if ((rc = PMPI_Bcast(leaf_start, nleaves + 1, MPI_INT, 0, comm)) != MPI_SUCCESS)
            goto fail;
        (void)sdnmpi_timing_step(SDNMPI_T_PLAN_LAYOUT, ts);
        plan->leaf_start = leaf_start; /* owned by the plan from here on */
        plan->nleaves = nleaves;
        leaf_start = NULL;
    }

    plan->ok = (int)outcome[OUT_OK];
    plan->comm_id = outcome[OUT_ID];
    plan->rab_ndims = (int)outcome[OUT_NDIMS];
    for (int i = 0; i < plan->rab_ndims && i < SDNMPI_RD_MAX_DIMS; i++)
        plan->rab_dist[i] = (int)outcome[OUT_DIST + i];
    plan->hier_min = (uint64_t)outcome[OUT_LAYOUT + 1];
    plan->hier_segment = (uint64_t)outcome[OUT_LAYOUT + 2];
    plan->reg_gen = s->reg_gen;
    plan->priv = MPI_COMM_NULL;
    if ((rc = PMPI_Comm_set_attr(comm, s->keyval, plan)) != MPI_SUCCESS)
        goto fail;
    plan->priv = priv; /* owned by the attribute from here on (MPI_COMM_NULL if !ok), unless */
    plan->priv_from = !plan->ok ? SDNMPI_PRIV_NONE  /* it is the library's communicator */
                      : shared  ? SDNMPI_PRIV_LIBWORLD
                      : use_lib ? SDNMPI_PRIV_GROUP
                                : SDNMPI_PRIV_SPLIT;
    *out = plan;
    record_plan_time(t_start, x0);
done:
    free(order);
    free(leaf_start);
    free(ips);
    free(ordered);
    free(pos);
    free(world);
    return MPI_SUCCESS;

fail:
    if (plan != NULL)
        free(plan->leaf_start);
    free(plan);
    free(order);
    free(leaf_start);
    free(ips);
    free(ordered);
    free(pos);
    free(world);
    if (priv != MPI_COMM_NULL && !shared)
        (void)PMPI_Comm_free(&priv); /* already failing: report the first error */
    return rc;
}

int sdnmpi_plan_get(MPI_Comm comm, const struct sdnmpi_plan **plan)
{
    void *val = NULL;
    int flag = 0;
    int rc = PMPI_Comm_get_attr(comm, sdnmpi_g.keyval, &val, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag) {
        *plan = val;
        return MPI_SUCCESS;
    }
    return plan_create(comm, plan);
}
