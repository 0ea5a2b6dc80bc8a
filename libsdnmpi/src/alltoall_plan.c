/* alltoall_plan.c -- asks the controller once per communicator for the pairwise exchange's
 * routes (alltoall_plan.h), through steps_plan.h. */
#include "alltoall_plan.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "alltoall_sched.h"
#include "schedule.h"
#include "steps_plan.h"

static int cmp_pair(const void *a, const void *b)
{
    const struct sdnmpi_host_pair *x = a, *y = b;
    uint32_t xs = ntohl(x->src), ys = ntohl(y->src), xd = ntohl(x->dst), yd = ntohl(y->dst);
    if (xs != ys)
        return xs < ys ? -1 : 1;
    return (xd > yd) - (xd < yd);
}

/* The exchange's steps as host pairs (same-host pairs dropped, duplicates counted). 0, or -1 out
 * of memory. */
static int build_steps(const uint32_t *ips, int p, const void *ctx, struct sdnmpi_host_steps *hs)
{
    const struct sdnmpi_alltoall_sched *sc = ctx;
    memset(hs, 0, sizeof *hs);
    hs->nsteps = p - 1;
    hs->start = malloc((size_t)p * sizeof *hs->start);
    hs->pairs = malloc(((size_t)p * (size_t)(p - 1) + 1) * sizeof *hs->pairs);
    if (hs->start == NULL || hs->pairs == NULL) {
        sdnmpi_host_steps_free(hs);
        return -1;
    }
    size_t n = 0;
    for (int k = 1; k < p; k++) {
        size_t first = n;
        hs->start[k - 1] = first;
        for (int q = 0; q < p; q++) {
            int to, from;
            sdnmpi_alltoall_sched_peer(sc, q, k, &to, &from);
            if (ips[q] != ips[to])
                hs->pairs[n++] = (struct sdnmpi_host_pair){ips[q], ips[to], 1};
        }
        qsort(hs->pairs + first, n - first, sizeof *hs->pairs, cmp_pair);
        size_t w = first;
        for (size_t i = first; i < n; i++) {
            if (w > first && hs->pairs[w - 1].src == hs->pairs[i].src
                && hs->pairs[w - 1].dst == hs->pairs[i].dst)
                hs->pairs[w - 1].count++;
            else
                hs->pairs[w++] = hs->pairs[i];
        }
        n = w;
    }
    hs->start[p - 1] = n;
    hs->npairs = n;
    return 0;
}

static struct sdnmpi_steps_kind kind = {"alltoall", "sdn-optimal", build_steps, MPI_KEYVAL_INVALID};

int sdnmpi_alltoall_plan_get(MPI_Comm priv, const struct sdnmpi_alltoall_sched *sc, int *ok,
                             int64_t *comm_id)
{
    if (sc->p < 1)
        return MPI_ERR_ARG;
    return sdnmpi_steps_plan_get(priv, &kind, sc, ok, comm_id);
}
