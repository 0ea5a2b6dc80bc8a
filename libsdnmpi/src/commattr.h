/* commattr.h -- what the per-communicator caches (plan.c's allreduce plans, bcast_plan.c's Bcast
 * trees, plan_ahead.c's records) share: dropping a cache's keyval at SDN_MPI_Finalize, a
 * communicator's world ranks, and counting distinct hosts. */
#ifndef SDNMPI_COMMATTR_H
#define SDNMPI_COMMATTR_H

#include <mpi.h>
#include <stdint.h>

/* Who frees a cache's attribute values: free_fn(value) when the communicator is freed or the value
 * deleted. */
struct sdnmpi_commattr_owner {
    void (*free_fn)(void *value);
};

/* A keyval for a cache whose values `owner` frees (not copied by MPI_Comm_dup), into *keyval.
 * MPI error code. */
int sdnmpi_commattr_keyval_create(int *keyval, struct sdnmpi_commattr_owner *owner);

/* Deletes the attribute `*keyval` from MPI_COMM_WORLD and MPI_COMM_SELF (the communicators MPI
 * never frees before MPI_Finalize, so their caches must go now) and frees the keyval, leaving
 * MPI_KEYVAL_INVALID. Nothing to do if it is already invalid. The first MPI error code. */
int sdnmpi_commattr_keyval_free(int *keyval);

/* Deletes comm's attribute `keyval` if it has one (its delete callback runs). MPI error code. */
int sdnmpi_commattr_drop(MPI_Comm comm, int keyval);

/* world[r] = the world rank of comm's rank r (p ranks): comm's group translated to
 * MPI_COMM_WORLD's, locally. MPI error code; *all_in = 0 if some rank is not in MPI_COMM_WORLD
 * (a spawned or connected process). */
int sdnmpi_comm_world_ranks(MPI_Comm comm, int p, int *world, int *all_in);

/* Distinct addresses among ips[0..p); -1 if out of memory. */
int sdnmpi_count_hosts(const uint32_t *ips, int p);

#endif
