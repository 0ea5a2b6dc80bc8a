/* schedule.c -- recursive doubling's rank pairs and their host pairs (see schedule.h). */
#include "schedule.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

void sdnmpi_rd_geometry(int p, int *pof2, int *rem)
{
    int q = 1;
    while (q <= p / 2)
        q <<= 1;
    *pof2 = q;
    *rem = p - q;
}

int sdnmpi_rd_vrank(int rank, int rem)
{
    if (rank < 2 * rem)
        return (rank % 2) ? rank / 2 : -1;
    return rank - rem;
}

int sdnmpi_rd_rank(int v, int rem)
{
    return v < rem ? 2 * v + 1 : v + rem;
}

int sdnmpi_rd_nsteps(int p)
{
    int pof2, rem, n = 0;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    for (int d = 1; d < pof2; d <<= 1)
        n++;
    return n + (rem ? 2 : 0);
}

int sdnmpi_rd_step_pairs(int p, int s, int *src, int *dst)
{
    int pof2, rem;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    int nsteps = sdnmpi_rd_nsteps(p);
    if (s < 0 || s >= nsteps)
        return 0;
    if (rem && s == 0) {
        for (int i = 0; i < rem; i++)
            src[i] = 2 * i, dst[i] = 2 * i + 1;
        return rem;
    }
    if (rem && s == nsteps - 1) {
        for (int i = 0; i < rem; i++)
            src[i] = 2 * i + 1, dst[i] = 2 * i;
        return rem;
    }
    int d = 1 << (s - (rem ? 1 : 0));
    for (int v = 0; v < pof2; v++) {
        src[v] = sdnmpi_rd_rank(v, rem);
        dst[v] = sdnmpi_rd_rank(v ^ d, rem);
    }
    return pof2;
}

struct dist_key {
    int64_t load;
    int cross;
    int dist;
};

static int cmp_dist_key(const void *a, const void *b)
{
    const struct dist_key *x = a, *y = b;
    if (x->load != y->load)
        return x->load < y->load ? -1 : 1;
    if (x->cross != y->cross)
        return x->cross < y->cross ? -1 : 1;
    return (x->dist > y->dist) - (x->dist < y->dist);
}

int sdnmpi_rab_order(int p, const uint32_t *rank_ip, const int64_t *step_load, size_t nloads,
                     int *dist)
{
    int pof2, rem, n = 0;
    if (p < 2)
        return 0;
    sdnmpi_rd_geometry(p, &pof2, &rem);
    int use_loads = step_load != NULL && nloads >= (size_t)sdnmpi_rd_nsteps(p);
    struct dist_key keys[SDNMPI_RD_MAX_DIMS];
    for (int d = 1; d < pof2 && n < SDNMPI_RD_MAX_DIMS; d <<= 1, n++) {
        keys[n].dist = d;
        keys[n].load = use_loads ? step_load[n + (rem ? 1 : 0)] : 0;
        keys[n].cross = 0;
        for (int v = 0; rank_ip != NULL && v < pof2; v++)
            keys[n].cross += rank_ip[sdnmpi_rd_rank(v, rem)] != rank_ip[sdnmpi_rd_rank(v ^ d, rem)];
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_dist_key);
    for (int i = 0; i < n; i++)
        dist[i] = keys[i].dist;
    return n;
}

/* Sorting one step's pairs like Python sorts tuples of dotted-quad strings. */
struct keyed_pair {
    const char *src_s, *dst_s;
    uint32_t src, dst;
};

static int cmp_pair(const void *a, const void *b)
{
    const struct keyed_pair *x = a, *y = b;
    int c = strcmp(x->src_s, y->src_s);
    return c ? c : strcmp(x->dst_s, y->dst_s);
}

void sdnmpi_host_steps_free(struct sdnmpi_host_steps *hs)
{
    free(hs->start);
    free(hs->pairs);
    memset(hs, 0, sizeof *hs);
}

static int rd_pairs(const void *ctx, int s, int *src, int *dst)
{
    return sdnmpi_rd_step_pairs(*(const int *)ctx, s, src, dst);
}

int sdnmpi_host_steps_build(int p, const uint32_t *rank_ip, size_t max_pairs,
                            struct sdnmpi_host_steps *out)
{
    if (p < 1) {
        memset(out, 0, sizeof *out);
        return SDNMPI_STEPS_INVALID;
    }
    return sdnmpi_host_steps_from(p, sdnmpi_rd_nsteps(p), p, rd_pairs, &p, rank_ip, max_pairs, out);
}

int sdnmpi_host_steps_from(int p, int nsteps, int max_step_pairs, sdnmpi_step_pairs_fn step_pairs,
                           const void *ctx, const uint32_t *rank_ip, size_t max_pairs,
                           struct sdnmpi_host_steps *out)
{
    memset(out, 0, sizeof *out);
    if (p < 1 || nsteps < 0 || max_step_pairs < 1)
        return SDNMPI_STEPS_INVALID;
    int rc = SDNMPI_STEPS_NOMEM;
    char(*names)[INET_ADDRSTRLEN] = calloc((size_t)p, sizeof *names);
    int *src = calloc((size_t)max_step_pairs, sizeof *src);
    int *dst = calloc((size_t)max_step_pairs, sizeof *dst);
    struct keyed_pair *kp = calloc((size_t)max_step_pairs, sizeof *kp);
    out->start = calloc((size_t)nsteps + 1, sizeof *out->start);
    size_t cap = 0;
    if (names == NULL || src == NULL || dst == NULL || kp == NULL || out->start == NULL)
        goto done;
    for (int r = 0; r < p; r++) {
        struct in_addr in = {.s_addr = rank_ip[r]};
        if (inet_ntop(AF_INET, &in, names[r], INET_ADDRSTRLEN) == NULL)
            goto done;
    }
    out->nsteps = nsteps;
    for (int s = 0; s < nsteps; s++) {
        int n = step_pairs(ctx, s, src, dst);
        size_t k = 0;
        for (int i = 0; i < n; i++) {
            if (rank_ip[src[i]] == rank_ip[dst[i]])
                continue;
            kp[k].src_s = names[src[i]];
            kp[k].dst_s = names[dst[i]];
            kp[k].src = rank_ip[src[i]];
            kp[k].dst = rank_ip[dst[i]];
            k++;
        }
        qsort(kp, k, sizeof *kp, cmp_pair);
        for (size_t i = 0; i < k; i++) {
            if (out->npairs > out->start[s]) {
                struct sdnmpi_host_pair *last = &out->pairs[out->npairs - 1];
                if (last->src == kp[i].src && last->dst == kp[i].dst) {
                    last->count++;
                    continue;
                }
            }
            if (out->npairs >= max_pairs) {
                rc = SDNMPI_STEPS_TOO_MANY;
                goto done;
            }
            if (out->npairs == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                if (ncap > max_pairs)
                    ncap = max_pairs;
                struct sdnmpi_host_pair *np = realloc(out->pairs, ncap * sizeof *np);
                if (np == NULL)
                    goto done;
                out->pairs = np;
                cap = ncap;
            }
            out->pairs[out->npairs].src = kp[i].src;
            out->pairs[out->npairs].dst = kp[i].dst;
            out->pairs[out->npairs].count = 1;
            out->npairs++;
        }
        out->start[s + 1] = out->npairs;
    }
    rc = SDNMPI_STEPS_OK;
done:
    free(names);
    free(src);
    free(dst);
    free(kp);
    if (rc != SDNMPI_STEPS_OK)
        sdnmpi_host_steps_free(out);
    return rc;
}
