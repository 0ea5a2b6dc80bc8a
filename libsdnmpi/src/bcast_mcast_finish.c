/* bcast_mcast_finish.c -- finishing by PMPI_Bcast what the multicast rounds did not deliver
 * (bcast_mcast_steps.h). */
#include "bcast_mcast_steps.h"

#include <limits.h>

#define MAX_FINISH_RUNS 64    /* more runs of missing datagrams: PMPI_Bcast the whole message */

/* Runs of set bits in map[0..n); *too_long if one is longer than INT_MAX bytes. */
static uint32_t count_runs(const struct sdnmpi_bcast_call *c, const uint64_t *map, int *too_long)
{
    uint32_t runs = 0;
    *too_long = 0;
    for (uint32_t i = 0; i < c->n;) {
        if (!sdnmpi_bcast_bit(map, i)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < c->n && sdnmpi_bcast_bit(map, j))
            j++;
        uint64_t len = (uint64_t)(j - i) * c->payload;
        if (len > INT_MAX)
            *too_long = 1;
        runs++;
        i = j;
    }
    return runs;
}

int sdnmpi_bcast_finish(struct sdnmpi_bcast_comm *bc, int root, const struct sdnmpi_bcast_call *c,
                        const uint64_t *need, int count, MPI_Datatype datatype, int *whole)
{
    int too_long = 0;
    uint32_t runs = count_runs(c, need, &too_long);
    *whole = runs > MAX_FINISH_RUNS || too_long;
    if (*whole)
        return PMPI_Bcast(c->data, count, datatype, root, bc->priv);
    for (uint32_t i = 0; i < c->n;) {
        if (!sdnmpi_bcast_bit(need, i)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < c->n && sdnmpi_bcast_bit(need, j))
            j++;
        uint64_t off = (uint64_t)i * c->payload;
        uint64_t end = (uint64_t)j * c->payload;
        if (end > c->bytes)
            end = c->bytes;
        int rc = PMPI_Bcast(c->data + off, (int)(end - off), MPI_BYTE, root, bc->priv);
        if (rc != MPI_SUCCESS)
            return rc;
        i = j;
    }
    return MPI_SUCCESS;
}
