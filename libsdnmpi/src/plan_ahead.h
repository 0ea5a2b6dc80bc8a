/*
 * plan_ahead.h -- a communicator's allreduce plan, requested before its first collective
 * (SDN_MPI_PLAN_AHEAD=1, the default) so that the controller plans and installs the routes while
 * the application does whatever it does before that collective.
 *
 * When: MPI_COMM_WORLD's at the end of SDN_MPI_Init (world rank 0; only when register's reply gave
 * the hosts' leaves, so that Init asks nothing more); any other communicator's when the
 * application makes it through SDN_MPI_Comm_dup, SDN_MPI_Comm_dup_with_info, SDN_MPI_Comm_split,
 * SDN_MPI_Comm_split_type, SDN_MPI_Comm_create or SDN_MPI_Comm_create_group (the preload library's
 * MPI_ versions; comm_create.c), by the new communicator's rank 0 alone (a create_group's other
 * ranks of the parent take no part), which computes the same order, leaf layout and host steps its
 * first collective would (plan_leader.h: locate if it must) and sends plan_allreduce under a new
 * communicator id without waiting for the reply (controller.h, "sent ahead"); nothing if its ranks
 * are all on one host. An MPI_Comm_idup'ed communicator has no request ahead (it is not valid
 * before its request completes): its first collective plans as without plan-ahead. A
 * communicator with the same group, in the same order, as one whose plan is already made (a dup)
 * reuses that plan's routes; as one whose request is ahead (or answered with routes), it shares
 * that request: no request either way.
 *
 * What was sent (or reused) is kept in a record on the new communicator (an MPI attribute, on its
 * rank 0 only; the request's id on the connection matches the reply to the communicator, whatever
 * the number made back to back). The first collective's plan (plan.c) takes the record's order,
 * then computes its request as always and, if it is the one recorded, under the same
 * registration, only collects the reply (or reuses); otherwise the reply is read and dropped and
 * the request is made as before. Nothing else changes: the other ranks never know, every rank
 * still takes the plan's outcome from the one agreement of plan.c, and a slow, refusing or
 * vanished controller gives the same failed request, and the same fallback, as before. A
 * communicator freed before its first collective drops its reply unread. Sending never touches
 * MPI beyond local group queries.
 */
#ifndef SDNMPI_PLAN_AHEAD_H
#define SDNMPI_PLAN_AHEAD_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "rpc.h"
#include "schedule.h"

/* What the leader of a communicator sent ahead, or reuses (an attribute on the communicator,
 * shared by the congruent communicators made from it before its reply was read: `refs`). */
struct sdnmpi_ahead_rec {
    int refs;                   /* communicators holding it (under sdnmpi_g.lock) */
    int64_t req_id;             /* the request on sdnmpi_g.conn; 0: none (reused, or collected) */
    int collected;              /* its reply was read: crc, why, reply (under sdnmpi_g.lock) */
    int crc;                    /* SDNMPI_CTRL_* */
    char why[256];
    struct sdnmpi_rpc_reply reply;
    int reused;                 /* the routes of a plan already made for the same group */
    int64_t comm_id;            /* the communicator id the routes are installed under */
    int64_t job_id, reg_gen;    /* the registration it names */
    int p, nleaves;             /* the ranks, and the leaves of the layout (0: unknown) */
    int *pos, *leaf_start;      /* the ranks' order, the leaf layout (p and p + 1; owned) */
    struct sdnmpi_host_steps hs; /* what was asked (owned) */
    int rab_ndims;              /* reused: Rabenseifner's halving order of the plan */
    int rab_dist[SDNMPI_RD_MAX_DIMS];
    double sent_at;             /* sdnmpi_clock() */
};

/* The records' keyval, sdnmpi_g.ahead_keyval (SDN_MPI_Init; SDN_MPI_Finalize frees it with
 * sdnmpi_commattr_keyval_free, which drops the world's record: the connection's next exchange or
 * its close reads or drops the reply). MPI error code. */
int sdnmpi_plan_ahead_keyval_create(void);

/* Stores `rec` (one reference, owned from here on) as comm's record. 0, or -1 (then the
 * reference is released). Call without sdnmpi_g.lock. */
int sdnmpi_plan_ahead_store(MPI_Comm comm, struct sdnmpi_ahead_rec *rec);

/* comm's record if it holds one for the current registration whose routes may still come or are
 * there (not a request already answered with a failure), or NULL. */
struct sdnmpi_ahead_rec *sdnmpi_plan_ahead_pending(MPI_Comm comm);

/* One more reference to rec (a congruent communicator shares it: 0, or -1 if the state lock is
 * broken), or one less: the last one frees it, abandoning its request if the reply was not read.
 * Call without sdnmpi_g.lock. */
int sdnmpi_plan_ahead_rec_hold(struct sdnmpi_ahead_rec *rec);
void sdnmpi_plan_ahead_rec_free(struct sdnmpi_ahead_rec *rec);

/* plan.c's leader, before ordering comm's p ranks: the order of comm's record (pos, p entries;
 * leaf_start, *nleaves + 1 entries) if it has one for the current registration that was not taken
 * yet. 0, or -1 (none: order them as always). */
int sdnmpi_plan_ahead_order(MPI_Comm comm, int p, int *pos, int *leaf_start, int *nleaves);

/* plan.c's leader, with sdnmpi_g.lock held, about to request `hs` for comm: SDNMPI_AHEAD_NONE if
 * comm has no record for it (then ask as always); SDNMPI_AHEAD_REUSED: routes are in place under
 * *comm_id, dist[0..*ndims) is their halving order (no request); else the collected reply's
 * result (SDNMPI_CTRL_*, as sdnmpi_conn_plan) for the request sent under *comm_id (read now, or
 * kept from when a communicator sharing the record read it). A record that does not match (other
 * steps, another registration) has its reply collected and kept, and answers SDNMPI_AHEAD_NONE. */
#define SDNMPI_AHEAD_NONE 2
#define SDNMPI_AHEAD_REUSED 3
int sdnmpi_plan_ahead_take_locked(MPI_Comm comm, const struct sdnmpi_host_steps *hs,
                                  int64_t *comm_id, int *dist, int *ndims,
                                  struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);

/* SDN_MPI_Init, every rank, once the state is agreed: world rank 0 sends the world's request if
 * it can (SDN path on, SDN_MPI_PLAN_AHEAD, two ranks or more on two hosts or more); never fails
 * (a request not sent is one the first collective makes). (plan_ahead_send.c) */
void sdnmpi_plan_ahead_start(void);

/* Every rank of comm, just made from parent by the application (MPI_COMM_NULL: nothing to do):
 * comm's rank 0 reuses parent's plan if comm is congruent with it, else sends comm's request if
 * it can. Local (no collective); never fails. (plan_ahead_send.c) */
void sdnmpi_plan_ahead_comm(MPI_Comm parent, MPI_Comm comm);

#endif
