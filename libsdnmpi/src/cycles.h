/* cycles.h -- two cycles over the ranks of a plan's private communicator, ordered leaf by leaf
 * (plan.h: leaf g holds ranks leaf_start[g] .. leaf_start[g+1]-1), and their routes. The
 * algorithms that run along them (SDN_MPI_Reduce's chains, reduce_chain.c; SDN_MPI_Allgather's
 * two rings, allgather_cycles.c) take their order, their routes and the wait that drives both
 * cycles at once (sdnmpi_cycles_waitany) from here, and their dispatchers the choice
 * (sdnmpi_cycles_use); below them, calling none.
 *
 * Cycle 0 visits the leaves in order, cycle 1 in reverse order, both the ranks of a leaf in
 * order: inside a leaf both go r -> r + 1, and between leaves cycle 0 goes from leaf g's last rank
 * to leaf g+1's first, cycle 1 from leaf g's last rank to leaf g-1's first (mod the leaves). So
 * every leaf sends one flow of each cycle out and takes one of each in, and no pair carries the
 * two cycles in opposite directions. With one or two leaves the cycles coincide.
 */
#ifndef SDNMPI_CYCLES_H
#define SDNMPI_CYCLES_H

#include <mpi.h>
#include <stdint.h>

#include "plan.h"

struct sdnmpi_cycles {
    int p;
    const int *leaf_start; /* nleaves + 1 entries; NULL (and nleaves 0): one leaf */
    int nleaves;
};

/* The successor / predecessor of rank r (0 <= r < p) in cycle c (0 or 1). */
int sdnmpi_cycle_next(const struct sdnmpi_cycles *ch, int c, int r);
int sdnmpi_cycle_prev(const struct sdnmpi_cycles *ch, int c, int r);

/* Collective over priv (the plan's private communicator, ch->p its size) the first time: asks
 * once per communicator for both cycles' routes, as one step with planner sdn-optimal
 * (SDN_MPI_PLANNER overrides it; steps_plan.h), and caches the outcome: *ok 1 if they are
 * installed (or none are needed). Every algorithm along the cycles shares the request. MPI error
 * code. */
int sdnmpi_cycles_routed(MPI_Comm priv, const struct sdnmpi_cycles *ch, int *ok);

/* Whether a call of `bytes` runs along the cycles of plan (ok, plan.h): bytes >= min (a knob agreed
 * at SDN_MPI_Init, so every rank decides alike) and the cycles' routes are in place
 * (sdnmpi_cycles_routed over plan->priv and its leaf layout, asked on the first such call of any
 * algorithm; a failed request leaves the caller's other algorithms). *rc: MPI error code. */
int sdnmpi_cycles_use(const struct sdnmpi_plan *plan, uint64_t bytes, uint64_t min, int *rc);

/* One cycle's receives, in the order an algorithm handles them (sdnmpi_cycles_waitany). */
struct sdnmpi_cycle_recvs {
    MPI_Request *recv; /* n receives, posted before the wait (MPI_REQUEST_NULL where none is) */
    int n;
    int done; /* handled so far: the cycle waits on recv[done] next (done == n: nothing left) */
};

/* The next receive to arrive of the two cycles rx[0] and rx[1], each cycle in its order: one
 * Waitany over both cycles' next receives, so neither waits for the other. 1: receive *k of cycle
 * *c arrived (rx[*c].done now counts it, its request is MPI_REQUEST_NULL); 0: none left, or *rc
 * is an MPI error code (else MPI_SUCCESS). */
int sdnmpi_cycles_waitany(struct sdnmpi_cycle_recvs rx[2], int *c, int *k, int *rc);

#endif
