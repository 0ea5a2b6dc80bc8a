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
#include "rpc.h"
#include "schedule.h"
#include "sock.h"
#include "state.h"

static int plan_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    struct sdnmpi_plan *plan = attr;
    if (plan->priv != MPI_COMM_NULL) {
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
    return is_world ? 0 : 1 + s->world_rank + (int64_t)s->world_size * s->comms_led++;
}

/* The plan's schedule: recursive doubling's steps, then, when the leaf layout's hierarchical
 * cross-leaf pairs are not among them (sdnmpi_hier_routes_needed), its cross-leaf groups. */
struct plan_steps {
    int p, rd_steps;
    const struct sdnmpi_hier_layout *lay; /* NULL: recursive doubling's steps only */
};

static int plan_step_pairs(const void *ctx, int s, int *src, int *dst)
{
    const struct plan_steps *ps = ctx;
    if (s < ps->rd_steps)
        return sdnmpi_rd_step_pairs(ps->p, s, src, dst);
    return sdnmpi_hier_cross_pairs(ps->lay, s - ps->rd_steps, src, dst);
}

/* Rank 0 of the communicator: the request (leaf layout: leaf_start, nleaves, 0 if unknown).
 * Returns 1 if the SDN algorithms may run; then dist[0..*ndims) is Rabenseifner's halving order. */
static int leader_request(const uint32_t *ips, int p, const int *leaf_start, int nleaves,
                          int is_world, int64_t *comm_id, int *dist, int *ndims)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_host_steps hs;
    struct sdnmpi_hier_layout lay;
    int hosts = sdnmpi_count_hosts(ips, p);
    *comm_id = -1;
    struct plan_steps ps = {p, sdnmpi_rd_nsteps(p), NULL};
    int nsteps = ps.rd_steps;
    if (sdnmpi_hier_layout_init(&lay, leaf_start, nleaves) && lay.p == p
        && sdnmpi_hier_routes_needed(&lay)) {
        ps.lay = &lay;
        nsteps += sdnmpi_hier_cross_groups(&lay);
    }
    int rc = sdnmpi_host_steps_from(p, nsteps, 2 * p, plan_step_pairs, &ps, ips,
                                    SDNMPI_RPC_MAX_PAIRS, &hs);
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
    if (pthread_mutex_lock(&s->lock) != 0) {
        sdnmpi_host_steps_free(&hs);
        sdnmpi_warn("plan: cannot lock the library state, falling back");
        return 0;
    }
    *comm_id = sdnmpi_plan_next_comm_id_locked(is_world);
    int crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
    if (crc == SDNMPI_CTRL_OK)
        crc = sdnmpi_conn_plan(&s->conn, &s->cfg, &s->job, *comm_id, &hs, &reply, why, sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    double rtt = (double)(sdnmpi_now_ms() - t0) / 1000.0;
    if (crc == SDNMPI_CTRL_OK) {
        char loads[160], order[160];
        size_t nloads = reply.n_max_load < SDNMPI_RPC_MAX_LOADS ? reply.n_max_load
                                                                : SDNMPI_RPC_MAX_LOADS;
        *ndims = sdnmpi_rab_order(p, ips, reply.max_load, nloads, dist);
        format_loads(&reply, loads, sizeof loads);
        format_order(dist, *ndims, order, sizeof order);
        sdnmpi_log("plan comm=%" PRId64 " ranks=%d hosts=%d steps=%d pairs=%zu: ok flows=%" PRId64
                   " max_load=[%s] halving=[%s] in %.3fs (controller total %.3fs plan %.3fs "
                   "install %.3fs)",
                   *comm_id, p, hosts, hs.nsteps, hs.npairs, reply.flows, loads, order, rtt,
                   reply.total_s, reply.plan_s, reply.install_s);
        ok = 1;
    } else {
        sdnmpi_log("plan comm=%" PRId64 " ranks=%d hosts=%d steps=%d pairs=%zu: failed after "
                   "%.3fs (%s), falling back",
                   *comm_id, p, hosts, hs.nsteps, hs.npairs, rtt, why);
    }
    sdnmpi_host_steps_free(&hs);
    return ok;
}

struct placed_rank {
    int64_t leaf;
    uint32_t host; /* host byte order */
    int rank;
};

static int cmp_placed(const void *a, const void *b)
{
    const struct placed_rank *x = a, *y = b;
    if (x->leaf != y->leaf)
        return x->leaf < y->leaf ? -1 : 1;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The leaves of the sorted ranks: leaf g holds sorted positions start[g] .. start[g+1]-1
 * (start has p + 1 entries), *nleaves of them. */
static void leaf_layout(const struct placed_rank *placed, int p, int *start, int *nleaves)
{
    int n = 0;
    for (int i = 0; i < p; i++)
        if (i == 0 || placed[i].leaf != placed[i - 1].leaf)
            start[n++] = i;
    start[n] = p;
    *nleaves = n;
}

/* Rank 0 of the communicator: pos[r] = the position of rank r in the algorithms' private
 * communicator. The controller says which leaf each rank's host is on (locate); the ranks are
 * ordered leaf by leaf, then host by host, so that the schedule's nearest partners share a host
 * or a leaf whatever the application's placement. The identity if SDN_MPI_REORDER=0, if the
 * request fails or if a host is unknown to the controller (then *nleaves = 0); else the leaves'
 * first positions in leaf_start (p + 1 entries, leaf_layout). */
static void leader_order(const uint32_t *ips, int p, int *pos, int *leaf_start, int *nleaves)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    *nleaves = 0;
    for (int r = 0; r < p; r++)
        pos[r] = r;
    if (!s->cfg.reorder || p < 3)
        return;
    int64_t *leaf = malloc((size_t)p * sizeof *leaf);
    struct placed_rank *placed = malloc((size_t)p * sizeof *placed);
    char why[256] = "";
    int crc = SDNMPI_CTRL_FAILED;
    if (leaf == NULL || placed == NULL) {
        snprintf(why, sizeof why, "out of memory");
    } else if (pthread_mutex_lock(&s->lock) == 0) {
        crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
        if (crc == SDNMPI_CTRL_OK)
            crc = sdnmpi_conn_locate(&s->conn, &s->cfg, &s->job, ips, (size_t)p, leaf, why,
                                     sizeof why);
        (void)pthread_mutex_unlock(&s->lock);
    } else {
        snprintf(why, sizeof why, "cannot lock the library state");
    }
    for (int r = 0; crc == SDNMPI_CTRL_OK && r < p; r++) {
        if (leaf[r] < 0) {
            snprintf(why, sizeof why, "rank %d's host is not in the controller's topology", r);
            crc = SDNMPI_CTRL_REFUSED;
        }
    }
    if (crc == SDNMPI_CTRL_OK) {
        for (int r = 0; r < p; r++)
            placed[r] = (struct placed_rank){leaf[r], ntohl(ips[r]), r};
        qsort(placed, (size_t)p, sizeof *placed, cmp_placed);
        int moved = 0;
        for (int i = 0; i < p; i++) {
            pos[placed[i].rank] = i;
            moved += placed[i].rank != i;
        }
        sdnmpi_log("plan ranks=%d: ranks ordered by leaf and host (%d moved)", p, moved);
        leaf_layout(placed, p, leaf_start, nleaves);
    } else {
        sdnmpi_log("plan ranks=%d: ranks keep their order (locate: %s)", p, why);
    }
    free(leaf);
    free(placed);
}

/* Returned, uncached, when some rank could not allocate: every rank then falls back for this
 * call and tries again on the next one. */
static const struct sdnmpi_plan no_plan = {0, MPI_COMM_NULL, -1, 0, {0}, NULL, 0, 0, 0};

/* Makes and caches the plan of comm (collective). */
static int plan_create(MPI_Comm comm, const struct sdnmpi_plan **out)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    MPI_Comm dup = MPI_COMM_NULL, priv = MPI_COMM_NULL;
    struct sdnmpi_plan *plan = NULL;
    uint32_t *ips = NULL, *ordered = NULL;
    int *pos = NULL;
    int rank, p, rc;
    /* ok, comm id, number of distances, the distances, then (OUT_LAYOUT) the number of leaves and
     * the leader's SDN_MPI_HIER_MIN and SDN_MPI_HIER_SEGMENT */
    enum { OUT_LAYOUT = 3 + SDNMPI_RD_MAX_DIMS, OUT_N = OUT_LAYOUT + 3 };
    int64_t outcome[OUT_N] = {0, -1, 0};

    /* The plan is made on a duplicate; the algorithms run on `priv`, the duplicate with the
     * ranks in the leader's order (leader_order). */
    if ((rc = PMPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(dup, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(dup, &p)) != MPI_SUCCESS)
        goto fail;

    /* Allocate everything first, then agree, so that a failure anywhere is everyone's. */
    plan = calloc(1, sizeof *plan);
    pos = malloc((2 * (size_t)p + 1) * sizeof *pos); /* the positions, then the leaves' starts */
    if (rank == 0) {
        ips = malloc((size_t)p * sizeof *ips);
        ordered = malloc((size_t)p * sizeof *ordered);
    }
    int local_ok = plan != NULL && pos != NULL && (rank != 0 || (ips != NULL && ordered != NULL));
    int all_ok = 0;
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, dup)) != MPI_SUCCESS)
        goto fail;
    if (!all_ok) {
        if (rank == 0)
            sdnmpi_log("plan ranks=%d: out of memory on some rank, falling back for this call", p);
        free(plan);
        free(pos);
        free(ips);
        free(ordered);
        *out = &no_plan;
        return PMPI_Comm_free(&dup);
    }
    if ((rc = PMPI_Gather(&s->fabric_ip, 1, MPI_UINT32_T, ips, 1, MPI_UINT32_T, 0, dup))
        != MPI_SUCCESS)
        goto fail;
    if (rank == 0) {
        int dist[SDNMPI_RD_MAX_DIMS], ndims = 0;
        int nleaves = 0;
        for (int i = 0; i <= p; i++)
            pos[p + i] = 0;
        leader_order(ips, p, pos, pos + p, &nleaves);
        outcome[OUT_LAYOUT] = nleaves;
        outcome[OUT_LAYOUT + 1] = (int64_t)s->cfg.hier_min;
        outcome[OUT_LAYOUT + 2] = (int64_t)s->cfg.hier_segment;
        for (int r = 0; r < p; r++)
            ordered[pos[r]] = ips[r];
        outcome[0] = leader_request(ordered, p, pos + p, nleaves, comm == MPI_COMM_WORLD,
                                    &outcome[1], dist, &ndims);
        outcome[2] = ndims;
        for (int i = 0; i < ndims; i++)
            outcome[3 + i] = dist[i];
    }
    if ((rc = PMPI_Bcast(outcome, OUT_N, MPI_INT64_T, 0, dup)) != MPI_SUCCESS
        || (rc = PMPI_Bcast(pos, 2 * p + 1, MPI_INT, 0, dup)) != MPI_SUCCESS)
        goto fail;
    if (outcome[0] && (rc = PMPI_Comm_split(dup, 0, pos[rank], &priv)) != MPI_SUCCESS)
        goto fail;
    if ((rc = PMPI_Comm_free(&dup)) != MPI_SUCCESS)
        goto fail;
    int nleaves = (int)outcome[OUT_LAYOUT];
    if (nleaves > 0 && nleaves <= p
        && (plan->leaf_start = malloc(((size_t)nleaves + 1) * sizeof *plan->leaf_start)) != NULL) {
        memcpy(plan->leaf_start, pos + p, ((size_t)nleaves + 1) * sizeof *plan->leaf_start);
        plan->nleaves = nleaves; /* (out of memory here: no layout, so no hierarchical algorithm) */
    }
    free(ips);
    free(ordered);
    free(pos);
    ips = ordered = NULL;
    pos = NULL;

    plan->ok = (int)outcome[0];
    plan->comm_id = outcome[1];
    plan->rab_ndims = (int)outcome[2];
    for (int i = 0; i < plan->rab_ndims && i < SDNMPI_RD_MAX_DIMS; i++)
        plan->rab_dist[i] = (int)outcome[3 + i];
    plan->hier_min = (uint64_t)outcome[OUT_LAYOUT + 1];
    plan->hier_segment = (uint64_t)outcome[OUT_LAYOUT + 2];
    plan->priv = MPI_COMM_NULL;
    if ((rc = PMPI_Comm_set_attr(comm, s->keyval, plan)) != MPI_SUCCESS)
        goto fail;
    plan->priv = priv; /* owned by the attribute from here on (MPI_COMM_NULL if !ok) */
    *out = plan;
    return MPI_SUCCESS;

fail:
    if (plan != NULL)
        free(plan->leaf_start);
    free(plan);
    free(pos);
    free(ips);
    free(ordered);
    if (dup != MPI_COMM_NULL)
        (void)PMPI_Comm_free(&dup); /* already failing: report the first error */
    if (priv != MPI_COMM_NULL)
        (void)PMPI_Comm_free(&priv);
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
