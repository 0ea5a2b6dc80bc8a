/*
 * timing.h -- where the start-up and first-call time goes (bench/README.md, "Start-up and
 * first-call cost"). SDN_MPI_Init and the making of a communicator's plan record their phases
 * here (CLOCK_MONOTONIC, seconds; a handful of clock reads, never in a cached call). Nothing is
 * printed: the benchmark reads the values through sdnmpi_test_timings (sdnmpi_testing.h).
 * The values live in the library state (sdnmpi_g.timing); each slot holds the last value
 * recorded, -1 = never recorded in this process.
 */
#ifndef SDNMPI_TIMING_H
#define SDNMPI_TIMING_H

#include <stddef.h>

enum sdnmpi_tslot {
    SDNMPI_T_INIT,             /* SDN_MPI_Init, this rank */
    SDNMPI_T_INIT_MPI,         /* ... its MPI-side exchange (addresses, the agreement) */
    SDNMPI_T_INIT_RPC,         /* ... world rank 0: connect, hello and register, until the reply */
    SDNMPI_T_INIT_RTTS,        /* ... world rank 0: RPC round trips (a count) */
    SDNMPI_T_INIT_CTRL,        /* ... the controller's own time for those requests (its replies) */
    SDNMPI_T_INIT_AHEAD,       /* ... world rank 0: computing and sending the world's plan request
                                  ahead (plan_ahead.c; -1: none sent) */
    SDNMPI_T_PLAN,             /* the last allreduce plan made (a communicator's first call) */
    SDNMPI_T_PLAN_MPI,         /* ... its MPI side: communicators, the exchange (leader: all but
                                  the RPCs) */
    SDNMPI_T_PLAN_LOCATE,      /* ... leader: the locate round trip (0: none needed) */
    SDNMPI_T_PLAN_REQUEST,     /* ... leader: the plan_allreduce round trip (or, sent ahead, the
                                  wait for its reply) */
    SDNMPI_T_PLAN_AHEAD,       /* ... 1: the reply was that of the request sent ahead (at Init, at
                                  the communicator's creation), 2: the routes of the same group's
                                  plan, reused (plan_ahead.h), else 0 */
    SDNMPI_T_PLAN_AHEAD_AGE,   /* ... leader: seconds from that request's send to this plan */
    SDNMPI_T_PLAN_RTTS,        /* ... leader: RPC round trips (a count) */
    SDNMPI_T_PLAN_CTRL,        /* ... the controller's time for plan_allreduce (its reply) */
    SDNMPI_T_PLAN_CTRL_PLAN,   /* ... of which planning */
    SDNMPI_T_PLAN_CTRL_INSTALL, /* ... and flow install until every switch's barrier reply */
    SDNMPI_T_BCAST_SETUP,      /* the last Bcast communicator state made: duplicate, addresses */
    SDNMPI_T_BCAST_TREE,       /* the last Bcast tree made, this rank: request, reply's Bcast,
                                  sockets, agreement */
    SDNMPI_T_BCAST_REQUEST,    /* the last Bcast tree request: its round trip (root's leader) */
    SDNMPI_T_BCAST_CTRL,       /* ... the controller's time for it */
    SDNMPI_T_BCAST_CTRL_INSTALL, /* ... of which flow and group install until the barriers */
    /* Init's and the plan's steps, this rank (issue 17's profile; each rank's own: the bench
     * reports world rank 0's and the largest over the ranks) */
    SDNMPI_T_INIT_ALLREDUCE,   /* Init: the Allreduce that agrees on memory (0: none, a world of
                                  at most SDNMPI_INIT_SPARE_RANKS; init_exchange.h) */
    SDNMPI_T_INIT_GATHER,      /* ... the Gather of the fabric addresses (and memory) to rank 0 */
    SDNMPI_T_INIT_BCAST,       /* ... the agreement's Bcast with every address (other ranks: with
                                  the wait for world rank 0's register) */
    SDNMPI_T_PLAN_DECIDE,      /* a plan: the leader's order and request (or taking the reply sent
                                  ahead), before its Allreduce (other ranks: their allocations) */
    SDNMPI_T_PLAN_ALLREDUCE,   /* ... the Allreduce of the outcome (with the wait for the leader) */
    SDNMPI_T_PLAN_SCATTER,     /* ... the Scatter of new positions, or with the library's
                                  communicator the Bcast of the order (0: order unchanged) */
    SDNMPI_T_PLAN_SPLIT,       /* ... making the private communicator (plan_comm.h: nothing for
                                  the world in its order, else a group's creation on the
                                  library's communicator; without it the split) */
    SDNMPI_T_PLAN_LAYOUT,      /* ... the leaf layout's Bcast (0: it rode in the Allreduce) */
    SDNMPI_T_INIT_LIBCOMM,     /* Init: making the library's own communicator (plan_comm.h; -1:
                                  not made, the SDN path is off; deferred: its start) */
    SDNMPI_T_LIBCOMM_WAIT,     /* the deferred creation's completion, where it was first needed
                                  (plan_comm.h; -1: none) */
    SDNMPI_T_N
};

/* Seconds of CLOCK_MONOTONIC (sub-microsecond resolution). */
double sdnmpi_clock(void);

/* Records slot = value (seconds, or a count). */
void sdnmpi_timing_set(enum sdnmpi_tslot slot, double value);

/* Records slot = the seconds since t0 (a step that began at t0 and ends now); returns the clock
 * now, where the next step begins. */
double sdnmpi_timing_step(enum sdnmpi_tslot slot, double t0);

/* The slots' names ("init", "init_mpi", ...) and values: up to cap of them into names/values;
 * returns SDNMPI_T_N. */
size_t sdnmpi_timing_get(const char **names, double *values, size_t cap);

/* The bytes of Init's agreement Bcast (init.c) and of a plan's Allreduce (plan.c): the messages
 * the bench's floor sends (bench/README.md, "The floor"). */
size_t sdnmpi_init_agreement_bytes(void);
size_t sdnmpi_plan_outcome_bytes(void);

#endif
