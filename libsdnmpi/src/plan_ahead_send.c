/* plan_ahead_send.c -- a communicator's plan request sent ahead, at SDN_MPI_Init for
 * MPI_COMM_WORLD and when the application makes any other, or the routes of a congruent
 * communicator's plan reused (plan_ahead.h). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commattr.h"
#include "controller.h"
#include "log.h"
#include "plan.h"
#include "plan_ahead.h"
#include "plan_leader.h"
#include "state.h"
#include "timing.h"

/* The largest predefined datatype (MPI_C_LONG_DOUBLE_COMPLEX), in bytes. */
#define LARGEST_PREDEFINED_BYTES 32

/* Whether some collective on p ranks could take the SDN path by its size: its count is an int,
 * the SDN algorithms take predefined datatypes only, and Allgather's and Alltoall's sizes count
 * the whole receive buffer (p blocks). A job that set SDN_MPI_MIN_BYTES above that (or above
 * SDN_MPI_MAX_BYTES) to keep its collectives off the SDN path gets no routes planned for them. */
static int some_call_eligible(const struct sdnmpi_config *cfg, int p)
{
    uint64_t largest = (uint64_t)INT_MAX * LARGEST_PREDEFINED_BYTES * (uint64_t)p;
    if (cfg->min_bytes <= cfg->max_bytes && cfg->min_bytes <= largest)
        return 1;
    sdnmpi_log("plan ahead ranks=%d: not sent, no collective can be above SDN_MPI_MIN_BYTES and "
               "below SDN_MPI_MAX_BYTES", p);
    return 0;
}

/* A new record for p ranks (order arrays allocated), or NULL. */
static struct sdnmpi_ahead_rec *rec_new(int p)
{
    struct sdnmpi_ahead_rec *rec = calloc(1, sizeof *rec);
    if (rec == NULL)
        return NULL;
    rec->refs = 1;
    rec->p = p;
    rec->pos = malloc((size_t)p * sizeof *rec->pos);
    rec->leaf_start = calloc((size_t)p + 1, sizeof *rec->leaf_start);
    if (rec->pos == NULL || rec->leaf_start == NULL) {
        sdnmpi_plan_ahead_rec_free(rec);
        return NULL;
    }
    return rec;
}

/* The leader: the order, leaf layout and host steps of the ranks on ips[0..p) (world ranks
 * world[0..p)) into rec, as the first collective's plan computes them (at_init: without locate).
 * 0, or -1 (nothing to send: the first collective meets the same case and says so). */
static int rec_steps(struct sdnmpi_ahead_rec *rec, const uint32_t *ips, const int *world,
                     int at_init)
{
    int p = rec->p;
    uint32_t *ordered = malloc((size_t)p * sizeof *ordered);
    if (ordered == NULL)
        return -1;
    int rc = -1;
    if (sdnmpi_plan_leader_order(ips, world, p, at_init, rec->pos, rec->leaf_start,
                                 &rec->nleaves) != 0) {
        sdnmpi_log("plan ahead: register's reply had no locality, the first collective plans");
        goto out;
    }
    for (int r = 0; r < p; r++)
        ordered[rec->pos[r]] = ips[r];
    if (sdnmpi_plan_leader_steps(ordered, p, rec->leaf_start, rec->nleaves, &rec->hs)
        != SDNMPI_STEPS_OK)
        goto out;
    if (rec->hs.npairs == 0)
        sdnmpi_log("plan ahead ranks=%d: all ranks on one host, nothing to ask", p);
    if (rec->hs.npairs == 0 || rec->hs.nsteps > SDNMPI_RPC_MAX_STEPS)
        sdnmpi_host_steps_free(&rec->hs); /* no request, or none possible */
    else
        rc = 0;
out:
    free(ordered);
    return rc;
}

/* The leader: sends rec's request (its steps are set) for comm and stores rec on comm; rec is
 * owned from here on. */
static void rec_send(MPI_Comm comm, int is_world, struct sdnmpi_ahead_rec *rec)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    char why[256] = "";
    int crc = SDNMPI_CTRL_FAILED;
    int64_t steps = rec->hs.nsteps;
    size_t pairs = rec->hs.npairs;
    if (pthread_mutex_lock(&s->lock) == 0) {
        /* the world's goes on the connection that registered, as it is: never a new one at Init */
        crc = is_world ? SDNMPI_CTRL_OK : sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
        if (crc == SDNMPI_CTRL_OK) {
            rec->comm_id = sdnmpi_plan_next_comm_id_locked(is_world);
            crc = sdnmpi_conn_plan_send(&s->conn, &s->cfg, &s->job, rec->comm_id, &rec->hs,
                                        &rec->req_id, why, sizeof why);
        }
        rec->job_id = s->job.id;
        rec->reg_gen = s->reg_gen;
        (void)pthread_mutex_unlock(&s->lock);
    } else {
        snprintf(why, sizeof why, "cannot lock the library state");
    }
    if (crc != SDNMPI_CTRL_OK) {
        sdnmpi_log("plan ahead ranks=%d: not sent (%s), the first collective asks", rec->p, why);
        sdnmpi_plan_ahead_rec_free(rec);
        return;
    }
    rec->sent_at = sdnmpi_clock();
    int64_t comm_id = rec->comm_id;
    if (sdnmpi_plan_ahead_store(comm, rec) != 0) {
        sdnmpi_log("plan ahead comm=%" PRId64 ": cannot keep it on the communicator, dropped",
                   comm_id);
        return;
    }
    sdnmpi_log("plan ahead comm=%" PRId64 " ranks=%d steps=%" PRId64 " pairs=%zu: sent", comm_id,
               rec->p, steps, pairs);
}

void sdnmpi_plan_ahead_start(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int p = s->world_size;
    if (s->world_rank != 0 || !s->sdn_ok || !s->cfg.plan_ahead || p < 2 || s->world_ips == NULL
        || !some_call_eligible(&s->cfg, p))
        return;
    double t0 = sdnmpi_clock();
    struct sdnmpi_ahead_rec *rec = rec_new(p);
    int *world = malloc((size_t)p * sizeof *world);
    if (rec != NULL && world != NULL) {
        for (int r = 0; r < p; r++)
            world[r] = r;
        if (rec_steps(rec, s->world_ips, world, 1) == 0) {
            rec_send(MPI_COMM_WORLD, 1, rec);
            rec = NULL;
        }
    } else {
        sdnmpi_log("plan ahead: out of memory, the first collective plans");
    }
    sdnmpi_plan_ahead_rec_free(rec);
    free(world);
    sdnmpi_timing_set(SDNMPI_T_INIT_AHEAD, sdnmpi_clock() - t0);
}

/* comm's leader, comm congruent with parent: parent's record (its request ahead, or its routes),
 * shared. 0 if stored, else -1. */
static int share(MPI_Comm parent, MPI_Comm comm, int p)
{
    struct sdnmpi_ahead_rec *rec = sdnmpi_plan_ahead_pending(parent);
    if (rec == NULL || rec->p != p || sdnmpi_plan_ahead_rec_hold(rec) != 0)
        return -1;
    int64_t comm_id = rec->comm_id;
    if (sdnmpi_plan_ahead_store(comm, rec) != 0)
        return -1;
    sdnmpi_log("plan ahead ranks=%d: shares comm=%" PRId64 "'s request (same group)", p, comm_id);
    return 0;
}

/* comm's leader: if comm has parent's group in parent's order and parent's plan is made, with its
 * routes, under the current registration, a record reusing them; else, if parent's request is
 * ahead (or was answered with routes), comm shares it. 0 if stored, else -1. */
static int reuse(MPI_Comm parent, MPI_Comm comm, int p)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    void *val = NULL;
    int flag = 0, same = MPI_UNEQUAL;
    if (parent == MPI_COMM_NULL || PMPI_Comm_compare(parent, comm, &same) != MPI_SUCCESS
        || same != MPI_CONGRUENT
        || PMPI_Comm_get_attr(parent, s->keyval, &val, &flag) != MPI_SUCCESS)
        return -1;
    const struct sdnmpi_plan *plan = flag ? val : NULL;
    if (plan == NULL)
        return share(parent, comm, p);
    if (!plan->ok || plan->priv == MPI_COMM_NULL || plan->reg_gen != s->reg_gen
        || plan->nleaves > p)
        return -1;
    struct sdnmpi_ahead_rec *rec = rec_new(p);
    MPI_Group g = MPI_GROUP_NULL, gpriv = MPI_GROUP_NULL;
    int *ranks = malloc((size_t)p * sizeof *ranks);
    int rc = rec != NULL && ranks != NULL && PMPI_Comm_group(comm, &g) == MPI_SUCCESS
             && PMPI_Comm_group(plan->priv, &gpriv) == MPI_SUCCESS ? 0 : -1;
    for (int r = 0; rc == 0 && r < p; r++)
        ranks[r] = r;
    if (rc == 0 && PMPI_Group_translate_ranks(g, p, ranks, gpriv, rec->pos) != MPI_SUCCESS)
        rc = -1;
    for (int r = 0; rc == 0 && r < p; r++)
        if (rec->pos[r] < 0 || rec->pos[r] >= p)
            rc = -1;
    if (g != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&g); /* nothing to do about a failure here */
    if (gpriv != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&gpriv);
    free(ranks);
    if (rc != 0) {
        sdnmpi_plan_ahead_rec_free(rec);
        return -1;
    }
    rec->reused = 1;
    rec->comm_id = plan->comm_id;
    rec->job_id = s->job.id;
    rec->reg_gen = s->reg_gen;
    rec->nleaves = plan->leaf_start != NULL ? plan->nleaves : 0;
    if (rec->nleaves > 0)
        memcpy(rec->leaf_start, plan->leaf_start, ((size_t)rec->nleaves + 1) * sizeof(int));
    rec->rab_ndims = plan->rab_ndims;
    memcpy(rec->rab_dist, plan->rab_dist, sizeof rec->rab_dist);
    int64_t comm_id = rec->comm_id;
    if (sdnmpi_plan_ahead_store(comm, rec) != 0)
        return -1;
    sdnmpi_log("plan ahead ranks=%d: the routes of comm=%" PRId64 " (same group), no request", p,
               comm_id);
    return 0;
}

void sdnmpi_plan_ahead_comm(MPI_Comm parent, MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int inter = 1, rank = -1, p = 0;
    if (comm == MPI_COMM_NULL || sdnmpi_state_unavailable() != NULL || !s->cfg.plan_ahead
        || s->world_ips == NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter
        || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0
        || PMPI_Comm_size(comm, &p) != MPI_SUCCESS || p < 2 || !some_call_eligible(&s->cfg, p)
        || reuse(parent, comm, p) == 0)
        return;
    struct sdnmpi_ahead_rec *rec = rec_new(p);
    int *world = malloc((size_t)p * sizeof *world);
    uint32_t *ips = malloc((size_t)p * sizeof *ips);
    int all_in = 0;
    if (rec == NULL || world == NULL || ips == NULL) {
        sdnmpi_log("plan ahead ranks=%d: out of memory, the first collective plans", p);
    } else if (sdnmpi_comm_world_ranks(comm, p, world, &all_in) == MPI_SUCCESS && all_in) {
        for (int r = 0; r < p; r++)
            ips[r] = s->world_ips[world[r]];
        if (rec_steps(rec, ips, world, 0) == 0) {
            rec_send(comm, 0, rec);
            rec = NULL;
        }
    }
    sdnmpi_plan_ahead_rec_free(rec);
    free(world);
    free(ips);
}
