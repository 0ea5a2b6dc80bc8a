/*
 * plan_ahead.h -- the world's allreduce plan, requested at SDN_MPI_Init (SDN_MPI_PLAN_AHEAD=1,
 * the default) so that the controller plans and installs the routes while the application does
 * whatever it does before its first collective.
 *
 * World rank 0, at the end of SDN_MPI_Init: the same order, leaf layout and host steps its first
 * collective on MPI_COMM_WORLD would compute (plan_leader.h; only when register's reply gave the
 * hosts' leaves, so that Init asks nothing more), sent as plan_allreduce for communicator 0
 * without waiting for the reply (controller.h, "sent ahead"). That first collective's plan
 * (plan.c) then computes its request as always and, if it is the one sent ahead, under the same
 * registration, only collects the reply; otherwise the reply is read and dropped and the request
 * is made as before. Nothing else changes: the other ranks never know, every rank still takes the
 * plan's outcome from the one agreement of plan.c, and a slow, refusing or vanished controller
 * gives the same failed request, and the same fallback, as before. The request never touches MPI.
 */
#ifndef SDNMPI_PLAN_AHEAD_H
#define SDNMPI_PLAN_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "rpc.h"
#include "schedule.h"

struct sdnmpi_plan_ahead {
    int active;                 /* world rank 0: the request is ahead on sdnmpi_g.conn */
    int64_t job_id, reg_gen;    /* the registration it names */
    struct sdnmpi_host_steps hs; /* what it asks for (owned) */
    double sent_at;             /* sdnmpi_clock() */
};

/* SDN_MPI_Init, every rank, once the state is agreed: world rank 0 sends the request if it can
 * (SDN path on, SDN_MPI_PLAN_AHEAD, two ranks or more on two hosts or more); never fails (a
 * request not sent is one the first collective makes). */
void sdnmpi_plan_ahead_start(void);

/* plan.c's leader, with sdnmpi_g.lock held, about to request `hs` for a communicator
 * (is_world: MPI_COMM_WORLD): SDNMPI_AHEAD_NONE if no request was sent ahead for it (then ask as
 * always), else the collected reply's result (SDNMPI_CTRL_*, as sdnmpi_conn_plan). A request
 * ahead that does not match (other steps, another registration) is collected, dropped, and
 * answers SDNMPI_AHEAD_NONE. */
#define SDNMPI_AHEAD_NONE 2
int sdnmpi_plan_ahead_take_locked(int is_world, const struct sdnmpi_host_steps *hs,
                                  struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);

/* SDN_MPI_Finalize, with sdnmpi_g.lock held: forgets a request never taken (the connection's next
 * exchange or its close reads or drops the reply). */
void sdnmpi_plan_ahead_drop_locked(void);

#endif
