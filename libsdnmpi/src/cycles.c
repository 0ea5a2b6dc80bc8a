/* cycles.c -- see cycles.h. */
#include "cycles.h"

#include <string.h>

#include "schedule.h"
#include "steps_plan.h"

/* The leaf of rank r (0 with no layout). */
static int leaf_of(const struct sdnmpi_cycles *ch, int r)
{
    int g = 0;
    while (g + 1 < ch->nleaves && ch->leaf_start[g + 1] <= r)
        g++;
    return g;
}

static int has_layout(const struct sdnmpi_cycles *ch)
{
    return ch->leaf_start != NULL && ch->nleaves >= 1 && ch->leaf_start[ch->nleaves] == ch->p;
}

int sdnmpi_cycle_next(const struct sdnmpi_cycles *ch, int c, int r)
{
    if (c == 0 || !has_layout(ch))
        return (r + 1) % ch->p;
    int g = leaf_of(ch, r), L = ch->nleaves;
    if (r + 1 < ch->leaf_start[g + 1])
        return r + 1;
    return ch->leaf_start[(g - 1 + L) % L]; /* the previous leaf's first rank */
}

int sdnmpi_cycle_prev(const struct sdnmpi_cycles *ch, int c, int r)
{
    if (c == 0 || !has_layout(ch))
        return (r - 1 + ch->p) % ch->p;
    int g = leaf_of(ch, r), L = ch->nleaves;
    if (r > ch->leaf_start[g])
        return r - 1;
    return ch->leaf_start[(g + 1) % L + 1] - 1; /* the next leaf's last rank */
}

int sdnmpi_cycles_waitany(struct sdnmpi_cycle_recvs rx[2], int *c, int *k, int *rc)
{
    MPI_Request head[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int i = 0; i < 2; i++)
        if (rx[i].done < rx[i].n)
            head[i] = rx[i].recv[rx[i].done];
    int which = MPI_UNDEFINED;
    if ((*rc = PMPI_Waitany(2, head, &which, MPI_STATUS_IGNORE)) != MPI_SUCCESS
        || which == MPI_UNDEFINED)
        return 0;
    *c = which;
    *k = rx[which].done++;
    rx[which].recv[*k] = MPI_REQUEST_NULL;
    return 1;
}

static int cycle_pairs(const void *ctx, int s, int *src, int *dst)
{
    const struct sdnmpi_cycles *ch = ctx;
    int n = 0;
    if (s != 0)
        return 0;
    for (int c = 0; c < 2; c++)
        for (int r = 0; r < ch->p; r++) {
            src[n] = r;
            dst[n++] = sdnmpi_cycle_next(ch, c, r);
        }
    return n;
}

/* The routes' request: one step holding both cycles' pairs (same-host pairs dropped, duplicates
 * counted), ranks on hosts ips[r]; ctx is a struct sdnmpi_cycles with ch->p == p (steps_plan.h's
 * build). 0, or -1 out of memory. */
static int cycles_steps(const uint32_t *ips, int p, const void *ctx, struct sdnmpi_host_steps *hs)
{
    const struct sdnmpi_cycles *ch = ctx;
    if (ch->p != p) {
        memset(hs, 0, sizeof *hs);
        return -1;
    }
    int rc = sdnmpi_host_steps_from(p, 1, 2 * p, cycle_pairs, ch, ips, (size_t)2 * (size_t)p, hs);
    return rc == SDNMPI_STEPS_OK ? 0 : -1;
}

static struct sdnmpi_steps_kind kind = {"cycles", "sdn-optimal", cycles_steps, MPI_KEYVAL_INVALID};

int sdnmpi_cycles_routed(MPI_Comm priv, const struct sdnmpi_cycles *ch, int *ok)
{
    int64_t id = -1;
    return sdnmpi_steps_plan_get(priv, &kind, ch, ok, &id);
}

int sdnmpi_cycles_use(const struct sdnmpi_plan *plan, uint64_t bytes, uint64_t min, int *rc)
{
    int p = 0, ok = 0;
    *rc = MPI_SUCCESS;
    if (bytes < min)
        return 0;
    if ((*rc = PMPI_Comm_size(plan->priv, &p)) != MPI_SUCCESS)
        return 0;
    const struct sdnmpi_cycles ch = {p, plan->leaf_start, plan->nleaves};
    *rc = sdnmpi_cycles_routed(plan->priv, &ch, &ok);
    return *rc == MPI_SUCCESS && ok;
}
