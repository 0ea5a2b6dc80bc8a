/* plan_ahead.c -- the records of plans requested ahead or reused, one per communicator, and their
 * taking by the first collective (plan_ahead.h). */
#include "plan_ahead.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commattr.h"
#include "controller.h"
#include "log.h"
#include "state.h"
#include "timing.h"

int sdnmpi_plan_ahead_rec_hold(struct sdnmpi_ahead_rec *rec)
{
    if (pthread_mutex_lock(&sdnmpi_g.lock) != 0)
        return -1;
    rec->refs++;
    (void)pthread_mutex_unlock(&sdnmpi_g.lock);
    return 0;
}

void sdnmpi_plan_ahead_rec_free(struct sdnmpi_ahead_rec *rec)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    if (rec == NULL)
        return;
    /* Without the lock (it cannot fail with a default mutex) the record stays: a leak, and the
     * reply stays on the connection's list, collected by nobody; nothing else. */
    if (pthread_mutex_lock(&s->lock) != 0)
        return;
    int last = --rec->refs <= 0;
    if (last && rec->req_id != 0 && !rec->collected)
        sdnmpi_conn_plan_abandon(&s->conn, rec->req_id);
    (void)pthread_mutex_unlock(&s->lock);
    if (!last)
        return;
    sdnmpi_host_steps_free(&rec->hs);
    free(rec->pos);
    free(rec->leaf_start);
    free(rec);
}

int sdnmpi_plan_ahead_store(MPI_Comm comm, struct sdnmpi_ahead_rec *rec)
{
    if (PMPI_Comm_set_attr(comm, sdnmpi_g.ahead_keyval, rec) == MPI_SUCCESS)
        return 0;
    sdnmpi_plan_ahead_rec_free(rec);
    return -1;
}

/* comm's record, or NULL. */
static struct sdnmpi_ahead_rec *rec_of(MPI_Comm comm)
{
    void *val = NULL;
    int flag = 0;
    if (sdnmpi_g.ahead_keyval == MPI_KEYVAL_INVALID
        || PMPI_Comm_get_attr(comm, sdnmpi_g.ahead_keyval, &val, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return val;
}

/* Whether rec holds something for comm's p ranks under the current registration. */
static int rec_usable(const struct sdnmpi_ahead_rec *rec, int p)
{
    const struct sdnmpi_state *s = &sdnmpi_g;
    return rec != NULL && rec->p == p && rec->job_id == s->job.id && rec->reg_gen == s->reg_gen;
}

struct sdnmpi_ahead_rec *sdnmpi_plan_ahead_pending(MPI_Comm comm)
{
    struct sdnmpi_ahead_rec *rec = rec_of(comm);
    int ok = 0;
    if (rec != NULL && pthread_mutex_lock(&sdnmpi_g.lock) == 0) {
        ok = rec_usable(rec, rec->p)
             && (rec->reused || !rec->collected || rec->crc == SDNMPI_CTRL_OK);
        (void)pthread_mutex_unlock(&sdnmpi_g.lock);
    }
    return ok ? rec : NULL;
}

int sdnmpi_plan_ahead_order(MPI_Comm comm, int p, int *pos, int *leaf_start, int *nleaves)
{
    const struct sdnmpi_ahead_rec *rec = rec_of(comm);
    if (!rec_usable(rec, p))
        return -1;
    memcpy(pos, rec->pos, (size_t)p * sizeof *pos);
    *nleaves = rec->nleaves;
    if (rec->nleaves > 0)
        memcpy(leaf_start, rec->leaf_start, ((size_t)rec->nleaves + 1) * sizeof *leaf_start);
    return 0;
}

static int same_steps(const struct sdnmpi_host_steps *x, const struct sdnmpi_host_steps *y)
{
    return x->nsteps == y->nsteps && x->npairs == y->npairs
           && memcmp(x->start, y->start, ((size_t)x->nsteps + 1) * sizeof *x->start) == 0
           && (x->npairs == 0 || memcmp(x->pairs, y->pairs, x->npairs * sizeof *x->pairs) == 0);
}

int sdnmpi_plan_ahead_take_locked(MPI_Comm comm, const struct sdnmpi_host_steps *hs,
                                  int64_t *comm_id, int *dist, int *ndims,
                                  struct sdnmpi_rpc_reply *reply, char *why, size_t whylen)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_ahead_rec *rec = rec_of(comm);
    if (rec == NULL)
        return SDNMPI_AHEAD_NONE;
    int current = rec->job_id == s->job.id && rec->reg_gen == s->reg_gen;
    if (rec->reused) {
        if (!current)
            return SDNMPI_AHEAD_NONE;
        *comm_id = rec->comm_id;
        *ndims = rec->rab_ndims;
        memcpy(dist, rec->rab_dist, sizeof rec->rab_dist);
        sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD, 2.0);
        return SDNMPI_AHEAD_REUSED;
    }
    int just = rec->req_id != 0 && !rec->collected;
    if (just) {
        rec->crc = sdnmpi_conn_plan_collect(&s->conn, &s->cfg, rec->req_id, &rec->reply,
                                            rec->why, sizeof rec->why);
        rec->collected = 1;
    }
    if (!rec->collected)
        return SDNMPI_AHEAD_NONE;
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD_AGE, sdnmpi_clock() - rec->sent_at);
    if (!current || !same_steps(&rec->hs, hs)) {
        if (just || current)
            sdnmpi_log("plan ahead comm=%" PRId64 ": sent for %s, asking again", rec->comm_id,
                       current ? "other steps" : "an older registration");
        return SDNMPI_AHEAD_NONE;
    }
    *comm_id = rec->comm_id;
    *reply = rec->reply;
    if (rec->crc != SDNMPI_CTRL_OK)
        snprintf(why, whylen, "%s", rec->why);
    sdnmpi_timing_set(SDNMPI_T_PLAN_AHEAD, 1.0);
    return rec->crc;
}

static void rec_free_attr(void *attr)
{
    sdnmpi_plan_ahead_rec_free(attr);
}

static struct sdnmpi_commattr_owner rec_owner = {rec_free_attr};

int sdnmpi_plan_ahead_keyval_create(void)
{
    return sdnmpi_commattr_keyval_create(&sdnmpi_g.ahead_keyval, &rec_owner);
}
