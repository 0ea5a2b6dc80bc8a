/* prof_map.c -- communicator ranks to MPI_COMM_WORLD ranks. The translation of a communicator's
 * (remote) group is computed on first use and cached in an attribute of the communicator, which
 * MPI frees with it. */
#include <stdlib.h>

#include "prof.h"

struct comm_map {
    int inter;   /* an intercommunicator: `world` is its remote group */
    int me;      /* this process's rank in the communicator (local group) */
    int n;
    int world[]; /* [n] */
};

static int keyval = MPI_KEYVAL_INVALID;
static MPI_Group world_group = MPI_GROUP_NULL;

static int delete_map(MPI_Comm comm, int kv, void *value, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    free(value);
    return MPI_SUCCESS;
}

int prof_map_init(void)
{
    int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_map, &keyval, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
}

void prof_map_free(void)
{
    if (keyval != MPI_KEYVAL_INVALID) {
        /* MPI_COMM_WORLD and MPI_COMM_SELF live until MPI_Finalize: free their maps now. */
        MPI_Comm keep[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
        for (int i = 0; i < 2; i++) {
            void *value = NULL;
            int found = 0;
            if (PMPI_Comm_get_attr(keep[i], keyval, &value, &found) == MPI_SUCCESS && found)
                (void)PMPI_Comm_delete_attr(keep[i], keyval);
        }
        (void)PMPI_Comm_free_keyval(&keyval);
    }
    if (world_group != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&world_group);
}

static struct comm_map *build(MPI_Comm comm)
{
    int inter = 0, me = 0, n = 0;
    MPI_Group group = MPI_GROUP_NULL;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return NULL;
    int rc = inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group);
    if (rc != MPI_SUCCESS)
        return NULL;
    struct comm_map *map = NULL;
    int *ranks = NULL;
    if (PMPI_Group_size(group, &n) != MPI_SUCCESS || n <= 0)
        goto out;
    map = malloc(sizeof *map + (size_t)n * sizeof map->world[0]);
    ranks = malloc((size_t)n * sizeof *ranks);
    if (map == NULL || ranks == NULL)
        goto fail;
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    if (PMPI_Group_translate_ranks(group, n, ranks, world_group, map->world) != MPI_SUCCESS)
        goto fail;
    for (int i = 0; i < n; i++)
        if (map->world[i] == MPI_UNDEFINED) /* a process of another job (MPI_Comm_spawn, connect) */
            map->world[i] = -1;
    map->inter = inter;
    map->me = me;
    map->n = n;
    if (PMPI_Comm_set_attr(comm, keyval, map) != MPI_SUCCESS)
        goto fail;
    goto out;
fail:
    free(map);
    map = NULL;
out:
    free(ranks);
    (void)PMPI_Group_free(&group);
    return map;
}

static struct comm_map *lookup(MPI_Comm comm)
{
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL)
        return NULL;
    void *value = NULL;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, keyval, &value, &found) != MPI_SUCCESS)
        return NULL;
    return found ? value : build(comm);
}

int prof_world_rank(MPI_Comm comm, int rank)
{
    if (rank < 0) /* MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT */
        return -1;
    if (comm == MPI_COMM_WORLD)
        return rank < prof_g.size ? rank : -1;
    struct comm_map *map = lookup(comm);
    if (map == NULL || rank >= map->n)
        return -1;
    return map->world[rank];
}

void prof_send(MPI_Comm comm, int rank, uint64_t bytes)
{
    if (prof_g.active)
        prof_count_send(prof_world_rank(comm, rank), bytes);
}

int prof_comm_ranks(MPI_Comm comm, const int **world, int *n, int *me)
{
    struct comm_map *map = lookup(comm);
    if (map == NULL || map->inter)
        return -1;
    *world = map->world;
    *n = map->n;
    *me = map->me;
    return 0;
}

uint64_t prof_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}
