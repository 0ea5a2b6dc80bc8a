/* bcast_mcast_finish.c -- finishing by PMPI_Bcast what the multicast rounds did not deliver
 * (bcast_mcast_steps.h). */
#include "bcast_mcast_steps.h"

#include <limits.h>

#define MAX_FINISH_RUNS 64    /* more runs of missing datagrams: PMPI_Bcast the whole message */

/* The next run of set bits in map[*from..n): [*first, *end); 0 if there is none. */
static int next_run(const struct sdnmpi_bcast_call *c, const uint64_t *map, uint32_t from,
                    uint32_t *first, uint32_t *end)
{
    uint32_t i = from;
    while (i < c->n && !sdnmpi_bcast_bit(map, i))
        i++;
    if (i >= c->n)
        return 0;
    uint32_t j = i;
    while (j < c->n && sdnmpi_bcast_bit(map, j))
        j++;
    *first = i;
    *end = j;
    return 1;
}

/* Runs of set bits in map[0..n); *too_long if one is longer than INT_MAX bytes. */
static uint32_t count_runs(const struct sdnmpi_bcast_call *c, const uint64_t *map, int *too_long)
{
    uint32_t runs = 0, i, j;
    *too_long = 0;
    for (uint32_t from = 0; next_run(c, map, from, &i, &j); from = j) {
        if ((uint64_t)(j - i) * c->payload > INT_MAX)
            *too_long = 1;
        runs++;
    }
    return runs;
}

int sdnmpi_bcast_finish(struct sdnmpi_bcast_comm *bc, int root, const struct sdnmpi_bcast_call *c,
                        const uint64_t *need, int count, MPI_Datatype datatype, int *whole)
{
    int too_long = 0;
    uint32_t runs = count_runs(c, need, &too_long), i, j;
    *whole = runs > MAX_FINISH_RUNS || too_long;
    if (*whole)
        return PMPI_Bcast(c->data, count, datatype, root, bc->priv);
    for (uint32_t from = 0; next_run(c, need, from, &i, &j); from = j) {
        uint64_t off = (uint64_t)i * c->payload;
        uint64_t end = (uint64_t)j * c->payload;
        if (end > c->bytes)
            end = c->bytes;
        int rc = PMPI_Bcast(c->data + off, (int)(end - off), MPI_BYTE, root, bc->priv);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
