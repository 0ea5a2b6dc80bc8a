/* init_exchange.c -- SDN_MPI_Init's Gather and Bcast on MPI_COMM_WORLD (init_exchange.h). */
#include "init_exchange.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "env.h"
#include "timing.h"

/* Receive space for a rank that could not allocate its own: rank 0's Gather (two words a rank) or
 * another rank's addresses in the Bcast (one word a rank). Init runs once per process. */
static uint32_t spare[2 * SDNMPI_INIT_SPARE_RANKS];

int sdnmpi_init_gather(int rank, int size, uint32_t ip, struct sdnmpi_init_exchange *x)
{
    /* Test only (tests/unit/test_libsdnmpi_init.py): SDN_MPI_TEST_INIT_NOMEM=R, world rank R acts
     * as if its allocations failed; SDN_MPI_TEST_INIT_SPARE=N, the spare counts as N ranks
     * (N < SDNMPI_INIT_SPARE_RANKS: the path of a larger world, memory agreed first, at a small
     * size). */
    int fail = sdnmpi_env_long("SDN_MPI_TEST_INIT_NOMEM", -1, -1, INT_MAX) == rank;
    long spare_ranks = sdnmpi_env_long("SDN_MPI_TEST_INIT_SPARE", SDNMPI_INIT_SPARE_RANKS, 0,
                                       SDNMPI_INIT_SPARE_RANKS);
    x->ips = !fail && size > 0 && size <= INT_MAX / 8 ? malloc((size_t)size * sizeof *x->ips)
                                                       : NULL;
    uint32_t *all = NULL;
    if (rank == 0 && x->ips != NULL)
        all = malloc((size_t)size * 2 * sizeof *all);
    x->nomem = x->ips == NULL || (rank == 0 && all == NULL);
    x->carry = 1;
    int rc = MPI_SUCCESS;
    double t = sdnmpi_clock();
    if (size > spare_ranks) { /* no spare that large: agree on memory first */
        int64_t want = x->nomem, any = 0;
        rc = PMPI_Allreduce(&want, &any, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
        t = sdnmpi_timing_step(SDNMPI_T_INIT_ALLREDUCE, t);
        if (rc != MPI_SUCCESS || any) {
            x->nomem = x->nomem || (rank == 0 && any); /* rank 0 speaks for everyone */
            x->carry = 0;                              /* every rank knows: the agreement alone */
            goto out;
        }
    }
    if (rank == 0 && all == NULL)
        all = spare; /* size <= SDNMPI_INIT_SPARE_RANKS here */
    uint32_t mine[2] = {ip, (uint32_t)x->nomem};
    rc = PMPI_Gather(mine, 2, MPI_UINT32_T, all, 2, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    (void)sdnmpi_timing_step(SDNMPI_T_INIT_GATHER, t);
    if (rc != MPI_SUCCESS || rank != 0)
        goto out;
    for (int r = 0; r < size; r++)
        x->nomem |= all[2 * r + 1] != 0;
    for (int r = 0; !x->nomem && r < size; r++)
        x->ips[r] = all[2 * r];
out:
    if (all != spare)
        free(all);
    return rc;
}

int sdnmpi_init_bcast(void *agreement, size_t bytes, int size, struct sdnmpi_init_exchange *x)
{
    if (bytes > INT_MAX)
        return MPI_ERR_COUNT;
    if (!x->carry)
        return PMPI_Bcast(agreement, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    /* x->carry: size <= INT_MAX / 8 (else gather found no memory) and, without a table, <= the
     * spare's (else the Allreduce ended carry) */
    uint32_t *ips = x->ips != NULL ? x->ips : spare;
    MPI_Aint at[2];
    int len[2] = {(int)bytes, size * (int)sizeof *ips}, rc;
    MPI_Datatype both = MPI_DATATYPE_NULL;
    if ((rc = PMPI_Get_address(agreement, &at[0])) != MPI_SUCCESS
        || (rc = PMPI_Get_address(ips, &at[1])) != MPI_SUCCESS
        || (rc = PMPI_Type_create_hindexed(2, len, at, MPI_BYTE, &both)) != MPI_SUCCESS
        || (rc = PMPI_Type_commit(&both)) != MPI_SUCCESS)
        goto out;
    rc = PMPI_Bcast(MPI_BOTTOM, 1, both, 0, MPI_COMM_WORLD);
out:
    if (both != MPI_DATATYPE_NULL) {
        int frc = PMPI_Type_free(&both);
        if (rc == MPI_SUCCESS)
            rc = frc;
    }
    return rc;
}
