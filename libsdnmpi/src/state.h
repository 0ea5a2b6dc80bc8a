/*
 * state.h -- the library's one piece of global mutable state.
 *
 * `sdnmpi_g` holds everything that outlives a call: whether SDN_MPI_Init ran and what all ranks
 * agreed on there, this process's fabric address, the attribute keyvals of the per-communicator
 * caches (Allreduce plans, Bcast trees), and this process's controller connection. It is written
 * by SDN_MPI_Init and SDN_MPI_Finalize; after Init the only fields that change are `conn`,
 * `comms_led` (under `lock`, when this process leads a communicator's plan request),
 * `plans_led` (under `lock`, plan_comm.h), `libworld` (SDN_MPI_Finalize frees it),
 * `job`, `reg_gen`, `world_calls`, `reg_lost` (reconnect.c, after a lost registration) and
 * `last_path`, `last_bcast` (test hooks) and `timing` (timing.c, at Init and when a plan
 * is made). Per-communicator state lives in MPI attributes (plan.c,
 * bcast_plan.c, plan_ahead.c), not here.
 */
#ifndef SDNMPI_STATE_H
#define SDNMPI_STATE_H

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

#include "controller.h"
#include "env.h"
#include "timing.h"

/* What the last SDN_MPI_Allreduce of this process did (sdnmpi_testing.h). */
enum sdnmpi_path {
    SDNMPI_PATH_NONE = 0,     /* no call yet */
    SDNMPI_PATH_PMPI = 1,     /* fell back to PMPI_Allreduce */
    SDNMPI_PATH_RD = 2,       /* recursive doubling */
    SDNMPI_PATH_RAB = 3,      /* Rabenseifner */
    SDNMPI_PATH_EMPTY = 4,    /* count 0: nothing to do */
    SDNMPI_PATH_HIER = 5,     /* hierarchical (allreduce_hier.c) */
};

/* What the last SDN_MPI_Bcast of this process did (sdnmpi_testing.h). */
enum sdnmpi_bcast_path {
    SDNMPI_BCAST_NONE = 0,       /* no call yet */
    SDNMPI_BCAST_PMPI = 1,       /* fell back to PMPI_Bcast */
    SDNMPI_BCAST_MCAST = 2,      /* every byte arrived by multicast (first pass and repairs) */
    SDNMPI_BCAST_MCAST_PMPI = 3, /* multicast, the rest finished with PMPI_Bcast */
};

struct sdnmpi_bcast_stats {
    int path;                    /* enum sdnmpi_bcast_path */
    int rounds;                  /* multicast rounds (1 = the first pass only) */
    int64_t resent;              /* datagrams multicast again in repair rounds */
    int64_t finished;            /* datagrams finished with PMPI_Bcast (the whole message: all) */
};

struct sdnmpi_state {
    int initialized;          /* SDN_MPI_Init ran (successfully or falling back) */
    int finalized;            /* SDN_MPI_Finalize ran */
    int world_rank;           /* -1 before Init */
    int world_size;
    struct sdnmpi_config cfg; /* knobs; the collective ones are world rank 0's (agreed at Init) */
    int sdn_ok;               /* agreed at Init: the job is registered, plans may be requested */
    const char *off_reason;   /* why not, when !sdn_ok (a string literal) */
    struct sdnmpi_job_ref job; /* agreed at Init (and at a new registration, reconnect.c): the
                                  controller's job id (> 0 when sdn_ok) and its token (a secret:
                                  never printed) */
    uint32_t fabric_ip;       /* this rank's fabric IPv4 address, network byte order */
    uint32_t *world_ips;      /* every world rank's fabric address (when sdn_ok; for the flow
                                 hints), NULL otherwise; freed by SDN_MPI_Finalize */
    int64_t *world_leaf;      /* world rank 0: each world rank's leaf, from register's reply (as
                                 locate gives it; an entry < 0: unknown), or NULL; written under
                                 `lock` by a new registration (reconnect.c) */
    int keyval;               /* communicator attribute of the plan cache, or MPI_KEYVAL_INVALID */
    int reg_keyval;           /* communicator attribute of reconnect.c's stamp, or MPI_KEYVAL_INVALID */
    int64_t reg_gen;          /* registrations after the first one (agreed: reconnect.c) */
    int64_t world_calls;      /* SDN calls on communicators spanning MPI_COMM_WORLD (reconnect.c) */
    int agree_steps;          /* reconnect.c's agreement steps on: not under MPI_THREAD_MULTIPLE */
    int reg_lost;             /* world rank 0: 1 = the registering connection is gone, 2 = and
                                 registering again gave up (reconnect.c) */
    int bcast_keyval;         /* communicator attribute of the Bcast trees, or MPI_KEYVAL_INVALID */
    pthread_mutex_t lock;     /* guards conn and comms_led */
    struct sdnmpi_conn conn;  /* this process's controller connection (world rank 0: the one
                                 that registered the job) */
    int64_t comms_led;        /* sub-communicator plans this process has led (for comm ids) */
    MPI_Comm libworld;        /* the library's own copy of MPI_COMM_WORLD, parent of the plans'
                                 private communicators (plan_comm.h), or MPI_COMM_NULL */
    int plan_tag_ub;          /* MPI_TAG_UB, read at Init (plan_comm.h) */
    int64_t plans_led;        /* plans this process has led a private communicator's creation
                                 for (their tags; under `lock`) */
    int ahead_keyval;         /* communicator attribute of the plans requested ahead or reused
                                 (plan_ahead.h), or MPI_KEYVAL_INVALID */
    int last_path;            /* enum sdnmpi_path of the last SDN_MPI_Allreduce (test hook) */
    struct sdnmpi_bcast_stats last_bcast; /* the last SDN_MPI_Bcast (test hook) */
    double timing[SDNMPI_T_N]; /* start-up and first-call phases (timing.h; read by the bench) */
};

extern struct sdnmpi_state sdnmpi_g;

/* Why the collectives cannot take an SDN path in this process right now (no SDN_MPI_Init, after
 * SDN_MPI_Finalize, or the reason agreed at Init), or NULL if they may. The same on every rank. */
const char *sdnmpi_state_unavailable(void);

#endif
