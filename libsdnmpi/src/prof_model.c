/* prof_model.c -- see prof_model.h. */
#include "prof_model.h"

#include <stddef.h>

#include "prof.h"

static void send_to(const struct prof_coll *c, int peer, uint64_t bytes)
{
    prof_count_send(c->world[peer], bytes);
}

static uint64_t block(const uint64_t *blocks, uint64_t bytes, int i)
{
    return blocks != NULL ? blocks[i] : bytes;
}

void prof_model_bcast_binomial(const struct prof_coll *c, int root, uint64_t bytes)
{
    int p = c->n, vr = (c->me - root + p) % p, mask = 1;
    while (mask < p && !(vr & mask))
        mask <<= 1;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p)
            send_to(c, (vr + mask + root) % p, bytes);
}

void prof_model_reduce_binomial(const struct prof_coll *c, int root, uint64_t bytes)
{
    int p = c->n, vr = (c->me - root + p) % p;
    if (vr == 0)
        return;
    int parent = vr & (vr - 1); /* vr without its lowest set bit */
    send_to(c, (parent + root) % p, bytes);
}

void prof_model_allreduce_recursive_doubling(const struct prof_coll *c, uint64_t bytes)
{
    int p = c->n, me = c->me, pof2 = 1;
    if (p < 2)
        return;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2, newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            send_to(c, me + 1, bytes); /* fold into the odd neighbour, get the result back */
            return;
        }
        newrank = me / 2;
    } else {
        newrank = me - rem;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int nd = newrank ^ mask;
        send_to(c, nd < rem ? nd * 2 + 1 : nd + rem, bytes);
    }
    if (me < 2 * rem)
        send_to(c, me - 1, bytes); /* unfold: the result to the even neighbour */
}

void prof_model_barrier_dissemination(const struct prof_coll *c)
{
    for (int mask = 1; mask < c->n; mask <<= 1)
        send_to(c, (c->me + mask) % c->n, 0);
}

void prof_model_allgather_ring(const struct prof_coll *c, const uint64_t *blocks, uint64_t bytes)
{
    int p = c->n;
    for (int s = 0; s < p - 1; s++)
        send_to(c, (c->me + 1) % p, block(blocks, bytes, (c->me - s + p) % p));
}

void prof_model_alltoall_pairwise(const struct prof_coll *c, const uint64_t *blocks, uint64_t bytes)
{
    for (int s = 1; s < c->n; s++) {
        int peer = (c->me + s) % c->n;
        uint64_t b = block(blocks, bytes, peer);
        if (b > 0)
            send_to(c, peer, b);
    }
}

void prof_model_gather_linear(const struct prof_coll *c, int root, uint64_t bytes)
{
    if (c->me != root)
        send_to(c, root, bytes);
}

void prof_model_scatter_linear(const struct prof_coll *c, int root, const uint64_t *blocks, uint64_t bytes)
{
    if (c->me != root)
        return;
    for (int i = 0; i < c->n; i++)
        if (i != root)
            send_to(c, i, block(blocks, bytes, i));
}

void prof_model_scan_recursive_doubling(const struct prof_coll *c, uint64_t bytes)
{
    for (int mask = 1; mask < c->n; mask <<= 1)
        if ((c->me ^ mask) < c->n)
            send_to(c, c->me ^ mask, bytes);
}
