/* plan_leader.c -- what a communicator's leader asks the controller for: the ranks' order by leaf
 * and host, and the plan request's host steps (plan_leader.h). */
#include "plan_leader.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "commattr.h"
#include "controller.h"
#include "hier_layout.h"
#include "log.h"
#include "rpc.h"
#include "state.h"
#include "timing.h"

struct placed_rank {
    int64_t leaf;
    uint32_t host; /* host byte order */
    int rank;
};

static int cmp_placed(const void *a, const void *b)
{
    const struct placed_rank *x = a, *y = b;
    if (x->leaf != y->leaf)
        return x->leaf < y->leaf ? -1 : 1;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The leaves of the sorted ranks: leaf g holds sorted positions start[g] .. start[g+1]-1
 * (start has p + 1 entries), *nleaves of them. */
static void leaf_layout(const struct placed_rank *placed, int p, int *start, int *nleaves)
{
    int n = 0;
    for (int i = 0; i < p; i++)
        if (i == 0 || placed[i].leaf != placed[i - 1].leaf)
            start[n++] = i;
    start[n] = p;
    *nleaves = n;
}

/* World rank 0, lock held: leaf[r] for the ranks of world ranks world[0..p) from register's
 * reply (s->world_leaf; -1: a host the controller did not know). 0, or -1 if the reply had no
 * locality (a controller before issue 17) or this process has none: locate must be asked. */
static int leaves_from_register(const int *world, int p, int64_t *leaf)
{
    const struct sdnmpi_state *s = &sdnmpi_g;
    if (s->world_leaf == NULL || s->world_leaf[0] == SDNMPI_NO_LOCALITY)
        return -1;
    for (int r = 0; r < p; r++)
        leaf[r] = s->world_leaf[world[r]];
    return 0;
}

int sdnmpi_plan_leader_order(const uint32_t *ips, const int *world, int p, int ahead, int *pos,
                             int *leaf_start, int *nleaves)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    *nleaves = 0;
    for (int r = 0; r < p; r++)
        pos[r] = r;
    if (!s->cfg.reorder || p < 3 || sdnmpi_count_hosts(ips, p) == 1) /* one host: nothing to do */
        return 0;
    int64_t *leaf = malloc((size_t)p * sizeof *leaf);
    struct placed_rank *placed = malloc((size_t)p * sizeof *placed);
    char why[256] = "";
    int crc = SDNMPI_CTRL_FAILED, from_register = 0;
    if (leaf == NULL || placed == NULL) {
        snprintf(why, sizeof why, "out of memory");
    } else if (pthread_mutex_lock(&s->lock) == 0) {
        double t0 = sdnmpi_clock();
        crc = SDNMPI_CTRL_OK;
        from_register = leaves_from_register(world, p, leaf) == 0;
        if (!from_register && ahead) {
            (void)pthread_mutex_unlock(&s->lock);
            free(leaf);
            free(placed);
            return -1;
        }
        if (!from_register) {
            crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
            if (crc == SDNMPI_CTRL_OK)
                crc = sdnmpi_conn_locate(&s->conn, &s->cfg, &s->job, ips, (size_t)p, leaf, why,
                                         sizeof why);
            sdnmpi_timing_set(SDNMPI_T_PLAN_LOCATE, sdnmpi_clock() - t0);
        }
        (void)pthread_mutex_unlock(&s->lock);
    } else {
        snprintf(why, sizeof why, "cannot lock the library state");
    }
    for (int r = 0; crc == SDNMPI_CTRL_OK && r < p; r++) {
        if (leaf[r] < 0) {
            snprintf(why, sizeof why, "rank %d's host is not in the controller's topology", r);
            crc = SDNMPI_CTRL_REFUSED;
        }
    }
    if (crc == SDNMPI_CTRL_OK) {
        for (int r = 0; r < p; r++)
            placed[r] = (struct placed_rank){leaf[r], ntohl(ips[r]), r};
        qsort(placed, (size_t)p, sizeof *placed, cmp_placed);
        int moved = 0;
        for (int i = 0; i < p; i++) {
            pos[placed[i].rank] = i;
            moved += placed[i].rank != i;
        }
        if (!ahead)
            sdnmpi_log("plan ranks=%d: ranks ordered by leaf and host (%d moved)", p, moved);
        leaf_layout(placed, p, leaf_start, nleaves);
    } else if (!ahead) {
        sdnmpi_log("plan ranks=%d: ranks keep their order (%s: %s)", p,
                   from_register ? "register's locality" : "locate", why);
    }
    free(leaf);
    free(placed);
    return 0;
}

/* The plan's schedule: recursive doubling's steps, then, when the leaf layout's hierarchical
 * cross-leaf pairs are not among them (sdnmpi_hier_routes_needed), its cross-leaf groups. */
struct plan_steps {
    int p, rd_steps;
    const struct sdnmpi_hier_layout *lay; /* NULL: recursive doubling's steps only */
};

static int plan_step_pairs(const void *ctx, int s, int *src, int *dst)
{
    const struct plan_steps *ps = ctx;
    if (s < ps->rd_steps)
        return sdnmpi_rd_step_pairs(ps->p, s, src, dst);
    return sdnmpi_hier_cross_pairs(ps->lay, s - ps->rd_steps, src, dst);
}

int sdnmpi_plan_leader_steps(const uint32_t *ordered, int p, const int *leaf_start, int nleaves,
                             struct sdnmpi_host_steps *hs)
{
    struct sdnmpi_hier_layout lay;
    struct plan_steps ps = {p, sdnmpi_rd_nsteps(p), NULL};
    int nsteps = ps.rd_steps;
    if (sdnmpi_hier_layout_init(&lay, leaf_start, nleaves) && lay.p == p
        && sdnmpi_hier_routes_needed(&lay)) {
        ps.lay = &lay;
        nsteps += sdnmpi_hier_cross_groups(&lay);
    }
    return sdnmpi_host_steps_from(p, nsteps, 2 * p, plan_step_pairs, &ps, ordered,
                                  SDNMPI_RPC_MAX_PAIRS, hs);
}
