/*
 * plan.h -- per-communicator plans, cached in an MPI attribute.
 *
 * The first SDN_MPI_Allreduce on a communicator that the SDN algorithms can handle makes the plan:
 * rank 0 takes every rank's fabric address from those SDN_MPI_Init gathered, learns which leaf
 * each host is on (world rank 0: register's reply; other leaders: locate) and orders the ranks
 * leaf by leaf (SDN_MPI_REORDER=0 keeps the application's), computes the schedule's host pairs
 * and, unless they are all on one host, sends plan_allreduce to the controller, and orders
 * Rabenseifner's distances by the step loads of the reply; one Allreduce gives every rank the
 * outcome (and the agreement that all have their memory), and the algorithms get a private
 * communicator in the new order (their messages never mix with the application's), made from the
 * library's own communicator (plan_comm.h), or split from the communicator without one. The
 * outcome is cached on the communicator. Later calls only read the attribute. A request sent
 * ahead for the communicator (plan_ahead.h) gives the leader its order and its reply without a
 * round trip.
 */
#ifndef SDNMPI_PLAN_H
#define SDNMPI_PLAN_H

#include <mpi.h>
#include <stdint.h>

#include "schedule.h"

/* Where a plan's private communicator came from (plan_comm.h; sdnmpi_test_plan_priv). */
enum sdnmpi_priv_from {
    SDNMPI_PRIV_NONE = 0,     /* none (!ok) */
    SDNMPI_PRIV_LIBWORLD = 1, /* the library's communicator itself (MPI_COMM_WORLD, its order) */
    SDNMPI_PRIV_GROUP = 2,    /* a group's creation on the library's communicator */
    SDNMPI_PRIV_SPLIT = 3,    /* the split of the application's communicator (no library one) */
};

struct sdnmpi_plan {
    int ok;          /* routes are installed (or none are needed): use the SDN algorithms */
    MPI_Comm priv;   /* the algorithms' private communicator (plan_comm.h: made from the library's
                        communicator, or split from it); MPI_COMM_NULL if !ok */
    int priv_from;   /* enum sdnmpi_priv_from; SDNMPI_PRIV_LIBWORLD: priv is the library's
                        communicator itself, never freed with the plan */
    int64_t comm_id; /* the id sent to the controller; -1 if no request was made */
    int rab_ndims;   /* Rabenseifner's halving order (sdnmpi_rab_order), the same on every rank */
    int rab_dist[SDNMPI_RD_MAX_DIMS];
    /* The leaf layout of priv's ranks (from locate; the ranks are ordered leaf by leaf): leaf g
     * holds ranks leaf_start[g] .. leaf_start[g+1]-1, g < nleaves (nleaves + 1 entries, owned by
     * the plan); NULL and 0 if the layout is unknown (no locate, SDN_MPI_REORDER=0). */
    int *leaf_start;
    int nleaves;
    /* The communicator leader's allreduce knobs (SDN_MPI_HIER_MIN, SDN_MPI_HIER_SEGMENT), so that
     * every rank of the communicator chooses alike. */
    uint64_t hier_min, hier_segment;
    int64_t reg_gen; /* the registration it was made under (plan_ahead.c reuses current ones) */
};

/* Creates the attribute keyval (SDN_MPI_Init) / frees it and the plans of MPI_COMM_WORLD and
 * MPI_COMM_SELF (SDN_MPI_Finalize). MPI error codes. */
int sdnmpi_plan_keyval_create(void);
int sdnmpi_plan_keyval_free(void);

/* A new communicator id for requests led by this process (unique within the job, docs/rpc.md):
 * 0 for MPI_COMM_WORLD, else 1 + this process's world rank + world size x (communicators it led
 * before). Allreduce plans and Bcast trees share the counter. Call with sdnmpi_g.lock held. */
int64_t sdnmpi_plan_next_comm_id_locked(int is_world);

/* The plan of `comm`, made now if it has none (collective over comm). MPI error code. */
int sdnmpi_plan_get(MPI_Comm comm, const struct sdnmpi_plan **plan);

#endif
