/* allgather_util.c -- the rank map and byte view of the data-movement collectives
 * (allgather_util.h). */
#include "allgather_util.h"

#include <limits.h>
#include <stdlib.h>

#include "log.h"
#include "state.h"

int sdnmpi_rank_map(MPI_Comm comm, MPI_Comm priv, int p, int **orig)
{
    MPI_Group user = MPI_GROUP_NULL, mine = MPI_GROUP_NULL;
    int *q = malloc((size_t)p * sizeof *q), *out = malloc((size_t)p * sizeof *out);
    int rc = MPI_ERR_NO_MEM;
    *orig = NULL;
    if (q == NULL || out == NULL)
        goto done;
    for (int i = 0; i < p; i++)
        q[i] = i;
    if ((rc = PMPI_Comm_group(comm, &user)) != MPI_SUCCESS
        || (rc = PMPI_Comm_group(priv, &mine)) != MPI_SUCCESS
        || (rc = PMPI_Group_translate_ranks(mine, p, q, user, out)) != MPI_SUCCESS)
        goto done;
    *orig = out;
    out = NULL;
done:
    if (user != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&user); /* a leak at worst; the result stands */
    if (mine != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&mine);
    free(q);
    free(out);
    return rc;
}

int sdnmpi_bytes_view(MPI_Datatype datatype, int count, uint64_t *bytes, int *rc)
{
    int size = 0;
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    *bytes = 0;
    if ((*rc = PMPI_Type_size(datatype, &size)) != MPI_SUCCESS
        || (*rc = PMPI_Type_get_extent(datatype, &lb, &extent)) != MPI_SUCCESS
        || (*rc = PMPI_Type_get_true_extent(datatype, &tlb, &textent)) != MPI_SUCCESS)
        return 0;
    if (size == MPI_UNDEFINED || size < 0 || count < 0)
        return 0;
    *bytes = (uint64_t)count * (uint64_t)size;
    return lb == 0 && tlb == 0 && extent == size && textent == size;
}

const char *sdnmpi_blocks_check(const struct sdnmpi_blocks_args *a, int *p, uint64_t *block,
                                uint64_t *total, int *recv_ok, int *rc)
{
    const struct sdnmpi_config *cfg = &sdnmpi_g.cfg;
    const int in_place = a->sendbuf == MPI_IN_PLACE, sendcount = a->sendcount, recvcount = a->recvcount;
    const MPI_Datatype sendtype = a->sendtype, recvtype = a->recvtype;
    const MPI_Comm comm = a->comm;
    int inter = 0;
    *rc = MPI_SUCCESS;
    const char *why = sdnmpi_state_unavailable();
    if (why != NULL)
        return why;
    if (comm == MPI_COMM_NULL || recvtype == MPI_DATATYPE_NULL || recvcount < 0
        || (!in_place && (sendtype == MPI_DATATYPE_NULL || sendcount < 0)))
        return "invalid argument";
    if ((*rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS
        || (!inter && (*rc = PMPI_Comm_size(comm, p)) != MPI_SUCCESS))
        return "MPI error";
    if (inter)
        return "intercommunicator";
    *recv_ok = sdnmpi_bytes_view(recvtype, recvcount, block, rc);
    if (*rc != MPI_SUCCESS)
        return "MPI error";
    *total = *block * (uint64_t)*p; /* block is the same on every rank */
    if (*p == 1)
        return "one rank";
    if (*block == 0)
        return "empty message";
    if (*total > INT_MAX)
        return "more than INT_MAX bytes";
    if (*total < sdnmpi_coll_min_bytes())
        return "below the minimum size (SDN_MPI_MIN_BYTES)";
    if (*total > cfg->max_bytes)
        return "above SDN_MPI_MAX_BYTES";
    return NULL;
}

int sdnmpi_blocks_fallback(const struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                           const char *why)
{
    *c->last_path = 1;
    if (sdnmpi_g.initialized && !sdnmpi_g.finalized)
        sdnmpi_log("%s count=%d: %s (%s)", c->name, a->recvcount, c->pmpi_name, why);
    return c->pmpi(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount, a->recvtype,
                   a->comm);
}

int sdnmpi_blocks_enter(const struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        int *p, uint64_t *block, uint64_t *total, int *recv_ok, int *rc)
{
    const char *why = sdnmpi_blocks_check(a, p, block, total, recv_ok, rc);
    if (*rc != MPI_SUCCESS)
        return 1;
    if (why == NULL)
        return 0;
    *rc = sdnmpi_blocks_fallback(c, a, why); /* PMPI reports an invalid argument */
    return 1;
}

int sdnmpi_blocks_local_ok(int in_place, int sendcount, MPI_Datatype sendtype, uint64_t block,
                           int recv_ok, int *rc)
{
    uint64_t sent = 0;
    *rc = MPI_SUCCESS;
    if (!recv_ok || in_place)
        return recv_ok;
    return sdnmpi_bytes_view(sendtype, sendcount, &sent, rc) && sent == block;
}

uint64_t sdnmpi_coll_min_bytes(void)
{
    return sdnmpi_g.cfg.min_bytes > 0 ? sdnmpi_g.cfg.min_bytes : SDNMPI_COLL_DEFAULT_MIN_BYTES;
}
