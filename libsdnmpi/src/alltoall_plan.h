/* alltoall_plan.h -- the routes of SDN_MPI_Alltoall's pairwise exchange, per communicator.
 *
 * The first SDN_MPI_Alltoall on a communicator, after the allreduce plan (plan.h: the private
 * communicator, ranks ordered leaf by leaf), gathers the ranks' fabric addresses to the private
 * communicator's rank 0, which sends one plan_allreduce (docs/rpc.md) whose steps are the p - 1
 * permutations of the exchange (alltoall_sched.h) as host pairs, with planner `sdn-optimal`
 * (SDN_MPI_PLANNER overrides it, for the baselines): the controller routes every step on its own,
 * contention-free on a full-bisection fat-tree. The outcome is broadcast and cached in an attribute
 * of the private communicator (freed with it), so every rank decides alike and later calls cost
 * nothing. No request when all ranks share one host; a failure is cached too (PMPI from then on).
 */
#ifndef SDNMPI_ALLTOALL_PLAN_H
#define SDNMPI_ALLTOALL_PLAN_H

#include <mpi.h>
#include <stdint.h>

#include "alltoall_sched.h"

/* Collective over priv the first time: the steps of schedule sc (sc->p = priv's size; the same
 * on every rank, and on every call on priv). *ok: 1 routes installed or none needed, 0 not (then
 * PMPI_Alltoall). *comm_id the controller's id (-1: no request). MPI error code. */
int sdnmpi_alltoall_plan_get(MPI_Comm priv, const struct sdnmpi_alltoall_sched *sc, int *ok,
                             int64_t *comm_id);

#endif
