/* steps_plan.h -- routes for an SDN algorithm's own host-pair steps on a plan's private
 * communicator (the alltoall exchange's permutations, the two cycles of cycles.h), asked once per
 * communicator and kind.
 *
 * The first call on priv for a kind, after the allreduce plan (plan.h: the private communicator,
 * ranks ordered leaf by leaf), gathers the ranks' fabric addresses to priv's rank 0, which builds
 * the kind's steps and sends one plan_allreduce (docs/rpc.md) with the kind's default planner
 * (SDN_MPI_PLANNER overrides it, for the baselines). The outcome is broadcast and cached in the
 * kind's attribute on priv (freed with it), so every rank decides alike and later calls cost
 * nothing. No request when all ranks share one host; a failure is cached too.
 */
#ifndef SDNMPI_STEPS_PLAN_H
#define SDNMPI_STEPS_PLAN_H

#include <mpi.h>
#include <stdint.h>

#include "schedule.h"

/* Builds the steps of p ranks, rank r on host ips[r] (network byte order). 0, or -1 out of
 * memory (hs then holds nothing). */
typedef int (*sdnmpi_steps_build_fn)(const uint32_t *ips, int p, const void *ctx,
                                     struct sdnmpi_host_steps *hs);

struct sdnmpi_steps_kind {
    const char *name;            /* in the log lines: "<name> plan comm=..." */
    const char *default_planner; /* unless SDN_MPI_PLANNER names one */
    sdnmpi_steps_build_fn build;
    int keyval;                  /* the kind's attribute; MPI_KEYVAL_INVALID until first use */
};

/* Collective over priv the first time: the kind's steps (ctx: what build needs, the same on every
 * rank and every call on priv). *ok: 1 routes installed or none needed, 0 not. *comm_id: the
 * controller's id (-1: no request). MPI error code. */
int sdnmpi_steps_plan_get(MPI_Comm priv, struct sdnmpi_steps_kind *kind, const void *ctx, int *ok,
                          int64_t *comm_id);

#endif
