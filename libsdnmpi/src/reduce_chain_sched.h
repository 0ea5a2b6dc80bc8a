/* reduce_chain_sched.h -- the two cycles of SDN_MPI_Reduce's chain algorithm (reduce_chain.c),
 * over the ranks of a plan's private communicator, ordered leaf by leaf (plan.h: leaf g holds
 * ranks leaf_start[g] .. leaf_start[g+1]-1). The algorithm runs them, the plan (reduce.c through
 * steps_plan.h) asks the controller to route them, both from here; below both, calling neither.
 *
 * Cycle 0 visits the leaves in order, cycle 1 in reverse order, both the ranks of a leaf in
 * order: inside a leaf both go r -> r + 1, and between leaves cycle 0 goes from leaf g's last rank
 * to leaf g+1's first, cycle 1 from leaf g's last rank to leaf g-1's first (mod the leaves). So
 * every leaf sends one flow of each cycle out and takes one of each in, and no pair carries the
 * two cycles in opposite directions. With one or two leaves the cycles coincide.
 */
#ifndef SDNMPI_REDUCE_CHAIN_SCHED_H
#define SDNMPI_REDUCE_CHAIN_SCHED_H

#include <stdint.h>

#include "schedule.h"

struct sdnmpi_reduce_chains {
    int p;
    const int *leaf_start; /* nleaves + 1 entries; NULL (and nleaves 0): one leaf */
    int nleaves;
};

/* The successor / predecessor of rank r (0 <= r < p) in cycle c (0 or 1). */
int sdnmpi_reduce_chain_next(const struct sdnmpi_reduce_chains *ch, int c, int r);
int sdnmpi_reduce_chain_prev(const struct sdnmpi_reduce_chains *ch, int c, int r);

/* The plan's request: one step holding both cycles' pairs (same-host pairs dropped, duplicates
 * counted), ranks on hosts ips[r]; ctx is a struct sdnmpi_reduce_chains with ch->p == p
 * (steps_plan.h's build). 0, or -1 out of memory. */
int sdnmpi_reduce_chain_steps(const uint32_t *ips, int p, const void *ctx,
                              struct sdnmpi_host_steps *hs);

#endif
