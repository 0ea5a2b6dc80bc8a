/* reconnect.c -- a new registration after world rank 0 lost its connection (reconnect.h). */
#include "reconnect.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "commattr.h"
#include "controller.h"
#include "log.h"
#include "state.h"
#include "traffic.h"

/* A communicator's stamp, kept in the attribute's value itself (no allocation that could fail on
 * one rank only): the registration its caches were made under, and whether agreement steps happen
 * on it (its group is MPI_COMM_WORLD's, in the same order). */
struct stamp {
    int64_t gen;
    int spans_world;
};

static void *stamp_pack(struct stamp st)
{
    return (void *)(intptr_t)((st.gen << 1) | st.spans_world);
}

static struct stamp stamp_unpack(void *val)
{
    intptr_t v = (intptr_t)val;
    return (struct stamp){(int64_t)(v >> 1), (int)(v & 1)};
}

/* World rank 0's offer at an agreement step: gen 0 = nothing new. */
struct offer {
    int64_t gen;
    struct sdnmpi_job_ref job;
};

int sdnmpi_reconnect_keyval_create(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                                   &sdnmpi_g.reg_keyval, NULL);
}

int sdnmpi_reconnect_keyval_free(void)
{
    return sdnmpi_commattr_keyval_free(&sdnmpi_g.reg_keyval);
}

/* comm's stamp, made now (with the current registration) if it has none. */
static int stamp_get(MPI_Comm comm, struct stamp *out)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    void *val = NULL;
    int flag = 0, rc = PMPI_Comm_get_attr(comm, s->reg_keyval, &val, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flag) {
        *out = stamp_unpack(val);
        return MPI_SUCCESS;
    }
    int same = MPI_UNEQUAL;
    if ((rc = PMPI_Comm_compare(comm, MPI_COMM_WORLD, &same)) != MPI_SUCCESS)
        return rc;
    *out = (struct stamp){s->reg_gen, same == MPI_IDENT || same == MPI_CONGRUENT};
    return PMPI_Comm_set_attr(comm, s->reg_keyval, stamp_pack(*out));
}

/* World rank 0, lock held: no more attempts; the connection stays closed for good (the job it
 * served is gone, and no request may name it any more). */
static void give_up(const char *why)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    s->reg_lost = 2;
    sdnmpi_conn_close(&s->conn);
    s->conn.dead = 1;
    sdnmpi_warn("reconnect: giving up on registering job %" PRId64 " again (%s); cached routes "
                "stay, new plans fall back", s->job.id, why);
}

/* World rank 0, lock held: if the registering connection is gone, one attempt to register the
 * job again (when the connection's back-off allows); on success *o is the offer. */
static void try_register(struct offer *o)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    if (s->reg_lost == 2 || (s->conn.holds_job && sdnmpi_conn_alive(&s->conn)))
        return;
    if (!s->reg_lost) {
        /* The loss is not a failed attempt: a restart that cut a request in flight (a failure on
         * the connection) allows as many attempts as one found at an agreement step. */
        sdnmpi_conn_new_series(&s->conn);
        s->reg_lost = 1;
        sdnmpi_log("reconnect: the connection that registered job %" PRId64 " is gone; "
                   "registering the job again", s->job.id);
    }
    if (s->cfg.reconnect_tries == 0) {
        give_up("SDN_MPI_RECONNECT_TRIES=0");
        return;
    }
    char why[256] = "";
    int rc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_conn_register(&s->conn, &s->cfg, s->world_ips, (size_t)s->world_size, &o->job,
                                  s->world_leaf, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        o->gen = s->reg_gen + 1;
    else if (s->conn.dead || s->conn.failures > s->cfg.reconnect_tries)
        give_up(why);
    else
        sdnmpi_log("reconnect: attempt failed (%s)", why);
}

/* Every rank: the offer is the job's registration from now on. */
static void adopt(const struct offer *o)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    /* Switch even if the lock fails (it cannot with a default mutex): a rank that stayed behind
     * would decide differently from the others. */
    int locked = pthread_mutex_lock(&s->lock) == 0;
    int64_t old = s->job.id;
    s->job = o->job;
    s->job.token[sizeof s->job.token - 1] = '\0';
    s->reg_gen = o->gen;
    s->reg_lost = 0;
    if (s->world_rank != 0)
        sdnmpi_conn_reset(&s->conn); /* its connection was to the old controller */
    if (locked)
        (void)pthread_mutex_unlock(&s->lock);
    sdnmpi_log("reconnect: job %" PRId64 " is now job %" PRId64 " (registration %" PRId64
               "); cached plans and trees are made again",
               old, s->job.id, s->reg_gen);
    if (s->world_rank == 0 && s->cfg.traffic[0] != '\0')
        sdnmpi_traffic_send_trace(s->world_ips, s->world_size);
}

/* The agreement step on a world-spanning communicator (its rank 0 is world rank 0). */
static int agree(MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct offer o;
    memset(&o, 0, sizeof o);
    if (s->world_rank == 0 && pthread_mutex_lock(&s->lock) == 0) {
        try_register(&o);
        (void)pthread_mutex_unlock(&s->lock);
    }
    int rc = PMPI_Bcast(&o, (int)sizeof o, MPI_BYTE, 0, comm);
    if (rc == MPI_SUCCESS && o.gen != 0)
        adopt(&o);
    memset(&o, 0, sizeof o);
    return rc;
}

int sdnmpi_reconnect_point(MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct stamp st;
    int rc = stamp_get(comm, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    if (st.spans_world && s->agree_steps && SDNMPI_AGREE_AT(s->world_calls++)
        && (rc = agree(comm)) != MPI_SUCCESS)
        return rc;
    if (st.gen == s->reg_gen)
        return MPI_SUCCESS;
    st.gen = s->reg_gen;
    if ((rc = PMPI_Comm_set_attr(comm, s->reg_keyval, stamp_pack(st))) != MPI_SUCCESS
        || (rc = sdnmpi_commattr_drop(comm, s->keyval)) != MPI_SUCCESS)
        return rc;
    return sdnmpi_commattr_drop(comm, s->bcast_keyval);
}
