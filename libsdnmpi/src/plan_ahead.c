/* plan_ahead.c -- the world's allreduce plan requested at SDN_MPI_Init (plan_ahead.h). */
#include "plan_ahead.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "log.h"
#include "plan_leader.h"
#include "state.h"
#include "timing.h"

/* The largest predefined datatype (MPI_C_LONG_DOUBLE_COMPLEX), in bytes. */
#define LARGEST_PREDEFINED_BYTES 32

/* Whether some collective on the world could take the SDN path by its size: its count is an int,
 * the SDN algorithms take predefined datatypes only, and Allgather's and Alltoall's sizes count
 * the whole receive buffer (p blocks). A job that set SDN_MPI_MIN_BYTES above that (or above
 * SDN_MPI_MAX_BYTES) to keep its collectives off the SDN path gets no routes planned for them. */
static int some_call_eligible(const struct sdnmpi_config *cfg, int p)
{
    uint64_t largest = (uint64_t)INT_MAX * LARGEST_PREDEFINED_BYTES * (uint64_t)p;
    return cfg->min_bytes <= cfg->max_bytes && cfg->min_bytes <= largest;
}

/* World rank 0: the world's host steps, as its first collective's plan will compute them, into
 * *hs. 0, or -1 (nothing to send ahead; *hs is not set). */
static int world_steps(struct sdnmpi_host_steps *hs)
{
    const struct sdnmpi_state *s = &sdnmpi_g;
    int p = s->world_size, nleaves = 0, rc = -1;
    int *world = malloc((size_t)p * sizeof *world);
    int *pos = malloc((size_t)p * sizeof *pos);
    int *leaf_start = calloc((size_t)p + 1, sizeof *leaf_start);
    uint32_t *ordered = malloc((size_t)p * sizeof *ordered);
    if (world == NULL || pos == NULL || leaf_start == NULL || ordered == NULL) {
        sdnmpi_log("plan ahead: out of memory, the first collective plans");
        goto out;
    }
    for (int r = 0; r < p; r++)
        world[r] = r;
    if (sdnmpi_plan_leader_order(s->world_ips, world, p, 1, pos, leaf_start, &nleaves) != 0) {
        sdnmpi_log("plan ahead: register's reply had no locality, the first collective plans");
        goto out;
    }
    for (int r = 0; r < p; r++)
        ordered[pos[r]] = s->world_ips[r];
    if (sdnmpi_plan_leader_steps(ordered, p, leaf_start, nleaves, hs) != SDNMPI_STEPS_OK)
        goto out; /* the first collective meets the same trouble and says so */
    if (hs->npairs == 0 || hs->nsteps > SDNMPI_RPC_MAX_STEPS)
        sdnmpi_host_steps_free(hs); /* no request, or none possible: the first collective says */
    else
        rc = 0;
out:
    free(world);
    free(pos);
    free(leaf_start);
    free(ordered);
    return rc;
}

void sdnmpi_plan_ahead_start(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_plan_ahead *a = &s->ahead;
    if (s->world_rank != 0 || !s->sdn_ok || !s->cfg.plan_ahead || s->world_size < 2
        || s->world_ips == NULL)
        return;
    if (!some_call_eligible(&s->cfg, s->world_size)) {
        sdnmpi_log("plan ahead comm=%d: not sent, no collective can be above SDN_MPI_MIN_BYTES "
                   "and below SDN_MPI_MAX_BYTES", SDNMPI_WORLD_COMM_ID);
        return;
    }
    double t0 = sdnmpi_clock();
    struct sdnmpi_host_steps hs;
    if (world_steps(&hs) != 0) {
        sdnmpi_timing_set(SDNMPI_T_INIT_AHEAD, sdnmpi_clock() - t0);
        return;
    }
    char why[256] = "";
    int crc = SDNMPI_CTRL_FAILED;
    if (pthread_mutex_lock(&s->lock) == 0) {
        crc = sdnmpi_conn_plan_send(&s->conn, &s->cfg, &s->job, SDNMPI_WORLD_COMM_ID, &hs, why,
                                    sizeof why);
        if (crc == SDNMPI_CTRL_OK)
            *a = (struct sdnmpi_plan_ahead){1, s->job.id, s->reg_gen, hs, sdnmpi_clock()};
        (void)pthread_mutex_unlock(&s->lock);
    } else {
        snprintf(why, sizeof why, "cannot lock the library state");
    }
    if (crc == SDNMPI_CTRL_OK) {
        sdnmpi_log("plan ahead comm=%d ranks=%d steps=%d pairs=%zu: sent", SDNMPI_WORLD_COMM_ID,
                   s->world_size, hs.nsteps, hs.npairs);
    } else {
        sdnmpi_log("plan ahead comm=%d: not sent (%s), the first collective asks",
                   SDNMPI_WORLD_COMM_ID, why);
        sdnmpi_host_steps_free(&hs);
    }
    sdnmpi_timing_set(SDNMPI_T_INIT_AHEAD, sdnmpi_clock() - t0);
}

static int same_steps(const struct sdnmpi_host_steps *x, const struct sdnmpi_host_steps *y)
{
    return x->nsteps == y->nsteps && x->npairs == y->npairs
           && memcmp(x->start, y->start, ((size_t)x->nsteps + 1) * sizeof *x->start) == 0
           && (x->npairs == 0 || memcmp(x->pairs, y->pairs, x->npairs * sizeof *x->pairs) == 0);
}

int sdnmpi_plan_ahead_take_locked(int is_world, const struct sdnmpi_host_steps *hs,
                                  struct sdnmpi_rpc_reply *reply, char *why, size_t whylen)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_plan_ahead *a = &s->ahead;
    if (!is_world || !a->active)
        return SDNMPI_AHEAD_NONE;
    int same = a->job_id == s->job.id && a->reg_gen == s->reg_gen && same_steps(&a->hs, hs);
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD_AGE, sdnmpi_clock() - a->sent_at);
    sdnmpi_plan_ahead_drop_locked();
    int rc = sdnmpi_conn_plan_collect(&s->conn, &s->cfg, reply, why, whylen);
    if (!same) {
        sdnmpi_log("plan ahead comm=%d: sent for %s, asking again", SDNMPI_WORLD_COMM_ID,
                   a->job_id == s->job.id && a->reg_gen == s->reg_gen ? "other steps"
                                                                      : "an older registration");
        return SDNMPI_AHEAD_NONE;
    }
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD, 1.0);
    return rc;
}

void sdnmpi_plan_ahead_drop_locked(void)
{
    struct sdnmpi_plan_ahead *a = &sdnmpi_g.ahead;
    if (a->active)
        sdnmpi_host_steps_free(&a->hs);
    a->active = 0;
}
