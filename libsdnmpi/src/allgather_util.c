/* allgather_util.c -- the rank map and byte view of the data-movement collectives
 * (allgather_util.h). */
#include "allgather_util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

/* sdnmpi_blocks_enter's checks: NULL if the SDN path may go on, else why not; "MPI error" with
 * *rc set if an MPI query failed. Fills v's sizes. */
static const char *blocks_check(const struct sdnmpi_blocks_args *a, struct sdnmpi_blocks_view *v,
                                int *rc)
{
    const struct sdnmpi_config *cfg = &sdnmpi_g.cfg;
    const int in_place = a->sendbuf == MPI_IN_PLACE;
    int inter = 0;
    *rc = MPI_SUCCESS;
    const char *why = sdnmpi_state_unavailable();
    if (why != NULL)
        return why;
    if (a->comm == MPI_COMM_NULL || a->recvtype == MPI_DATATYPE_NULL || a->recvcount < 0
        || (!in_place && (a->sendtype == MPI_DATATYPE_NULL || a->sendcount < 0)))
        return "invalid argument";
    if ((*rc = PMPI_Comm_test_inter(a->comm, &inter)) != MPI_SUCCESS
        || (!inter && (*rc = PMPI_Comm_size(a->comm, &v->p)) != MPI_SUCCESS))
        return "MPI error";
    if (inter)
        return "intercommunicator";
    v->recv_ok = sdnmpi_bytes_view(a->recvtype, a->recvcount, &v->block, rc);
    if (*rc != MPI_SUCCESS)
        return "MPI error";
    v->total = v->block * (uint64_t)v->p; /* block is the same on every rank */
    if (v->p == 1)
        return "one rank";
    if (v->block == 0)
        return "empty message";
    if (v->total > INT_MAX)
        return "more than INT_MAX bytes";
    if (v->total < sdnmpi_coll_min_bytes())
        return "below the minimum size (SDN_MPI_MIN_BYTES)";
    if (v->total > cfg->max_bytes)
        return "above SDN_MPI_MAX_BYTES";
    return NULL;
}

int sdnmpi_blocks_fallback(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                           const char *why)
{
    c->last_path = 1;
    if (sdnmpi_g.initialized && !sdnmpi_g.finalized)
        sdnmpi_log("%s count=%d: %s (%s)", c->name, a->recvcount, c->pmpi_name, why);
    return c->pmpi(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount, a->recvtype,
                   a->comm);
}

int sdnmpi_blocks_enter(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        struct sdnmpi_blocks_view *v, int *rc)
{
    memset(v, 0, sizeof *v);
    const char *why = blocks_check(a, v, rc);
    if (*rc != MPI_SUCCESS)
        return 1;
    if (why == NULL) {
        if ((*rc = sdnmpi_plan_get(a->comm, &v->plan)) != MPI_SUCCESS)
            return 1;
        if (v->plan->ok)
            return 0;
        why = "no SDN routes for this communicator";
    }
    *rc = sdnmpi_blocks_fallback(c, a, why); /* PMPI reports an invalid argument */
    return 1;
}

/* This rank's side of the agreement's buffer check (sdnmpi_blocks_agree). *rc as above. */
static int local_ok(const struct sdnmpi_blocks_args *a, const struct sdnmpi_blocks_view *v, int *rc)
{
    uint64_t sent = 0;
    *rc = MPI_SUCCESS;
    if (!v->recv_ok || a->sendbuf == MPI_IN_PLACE)
        return v->recv_ok;
    return sdnmpi_bytes_view(a->sendtype, a->sendcount, &sent, rc) && sent == v->block;
}

int sdnmpi_blocks_agree(struct sdnmpi_blocks_coll *c, const struct sdnmpi_blocks_args *a,
                        struct sdnmpi_blocks_view *v, size_t scratch, int *rc)
{
    int mine = local_ok(a, v, rc), all_ok = 0;
    if (*rc != MPI_SUCCESS)
        return 1;
    if (mine && (*rc = sdnmpi_rank_map(a->comm, v->plan->priv, v->p, &v->orig)) != MPI_SUCCESS
        && *rc != MPI_ERR_NO_MEM)
        return 1;
    if (mine && scratch > 0 && (v->copy = malloc(scratch)) != NULL)
        memcpy(v->copy, a->recvbuf, scratch);
    mine = mine && v->orig != NULL && (scratch == 0 || v->copy != NULL);
    if ((*rc = PMPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_MIN, v->plan->priv)) == MPI_SUCCESS
        && all_ok)
        return 0;
    free(v->orig);
    free(v->copy);
    v->orig = NULL;
    v->copy = NULL;
    if (*rc == MPI_SUCCESS)
        *rc = sdnmpi_blocks_fallback(c, a, "non-contiguous buffers or no memory on some rank");
    return 1;
}

uint64_t sdnmpi_coll_min_bytes(void)
{
    return sdnmpi_cfg_min_bytes(&sdnmpi_g.cfg, SDNMPI_COLL_DEFAULT_MIN_BYTES);
}
