/* commattr.c -- shared parts of the per-communicator caches (commattr.h). */
#include "commattr.h"

#include <stdlib.h>
#include <string.h>

int sdnmpi_comm_world_ranks(MPI_Comm comm, int p, int *world, int *all_in)
{
    MPI_Group group = MPI_GROUP_NULL, wgroup = MPI_GROUP_NULL;
    int rc;
    *all_in = 0;
    for (int r = 0; r < p; r++)
        world[r] = r;
    if (comm == MPI_COMM_WORLD) {
        *all_in = 1;
        return MPI_SUCCESS;
    }
    if ((rc = PMPI_Comm_group(comm, &group)) != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_group(MPI_COMM_WORLD, &wgroup)) == MPI_SUCCESS) {
        int *ranks = malloc((size_t)p * sizeof *ranks);
        if (ranks != NULL) {
            memcpy(ranks, world, (size_t)p * sizeof *ranks);
            rc = PMPI_Group_translate_ranks(group, p, ranks, wgroup, world);
            free(ranks);
            *all_in = rc == MPI_SUCCESS;
            for (int r = 0; *all_in && r < p; r++)
                *all_in = world[r] != MPI_UNDEFINED;
        }
        (void)PMPI_Group_free(&wgroup); /* nothing to do about a failure here */
    }
    (void)PMPI_Group_free(&group);
    return rc;
}

static int owner_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval;
    const struct sdnmpi_commattr_owner *owner = extra;
    owner->free_fn(attr);
    return MPI_SUCCESS;
}

int sdnmpi_commattr_keyval_create(int *keyval, struct sdnmpi_commattr_owner *owner)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, owner_delete, keyval, owner);
}

int sdnmpi_commattr_drop(MPI_Comm comm, int keyval)
{
    void *val = NULL;
    int flag = 0;
    int rc = PMPI_Comm_get_attr(comm, keyval, &val, &flag);
    if (rc == MPI_SUCCESS && flag)
        rc = PMPI_Comm_delete_attr(comm, keyval);
    return rc;
}

int sdnmpi_commattr_keyval_free(int *keyval)
{
    if (*keyval == MPI_KEYVAL_INVALID)
        return MPI_SUCCESS;
    int rc = sdnmpi_commattr_drop(MPI_COMM_WORLD, *keyval);
    int rc2 = sdnmpi_commattr_drop(MPI_COMM_SELF, *keyval);
    int rc3 = PMPI_Comm_free_keyval(keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return rc != MPI_SUCCESS ? rc : rc2 != MPI_SUCCESS ? rc2 : rc3;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int sdnmpi_count_hosts(const uint32_t *ips, int p)
{
    uint32_t *copy = malloc((size_t)(p > 0 ? p : 1) * sizeof *copy);
    if (copy == NULL)
        return -1;
    if (p > 0)
        memcpy(copy, ips, (size_t)p * sizeof *copy);
    qsort(copy, (size_t)(p > 0 ? p : 0), sizeof *copy, cmp_u32);
    int n = p > 0;
    for (int i = 1; i < p; i++)
        n += copy[i] != copy[i - 1];
    free(copy);
    return n;
}
