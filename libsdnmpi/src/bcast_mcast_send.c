/* bcast_mcast_send.c -- the root's side of a multicast round: paced sends on every tree, and each
 * tree's rate after the round (bcast_mcast_steps.h). */
#include "bcast_mcast_steps.h"

#include <errno.h>
#include <inttypes.h>
#include <time.h>

#include "bcast_wire.h"
#include "log.h"
#include "mcast.h"
#include "state.h"

#define END_MARKERS 3         /* end-of-round markers per round */
#define NOBUFS_RETRIES 1000   /* per round, 1 ms apart */
#define RATE_FLOOR_DIV 16     /* the rate never drops below the knob / this */

/* One datagram, retrying while the kernel has no room. 0 sent, -1 failed. */
static int send_one(int fd, const struct sdnmpi_wire_hdr *h, const void *payload, size_t len,
                    int *retries)
{
    unsigned char hdr[SDNMPI_WIRE_HEADER];
    sdnmpi_wire_encode(h, hdr);
    for (;;) {
        int rc = sdnmpi_mcast_send(fd, hdr, sizeof hdr, payload, len);
        if (rc <= 0)
            return rc;
        if (++*retries > NOBUFS_RETRIES) {
            errno = ENOBUFS;
            return -1;
        }
        struct timespec ms = {.tv_sec = 0, .tv_nsec = 1000000};
        (void)nanosleep(&ms, NULL); /* an interrupted nap is fine */
    }
}

int sdnmpi_bcast_send_round(const struct sdnmpi_bcast_tree *t, const struct sdnmpi_bcast_call *c,
                            uint32_t epoch, int round, const uint64_t *need, uint32_t *sent)
{
    struct sdnmpi_pacer pacer[SDNMPI_BCAST_MAX_TREES];
    uint64_t next[SDNMPI_BCAST_MAX_TREES];  /* the tree's next datagram to look at */
    uint32_t sent_on[SDNMPI_BCAST_MAX_TREES];
    int ends[SDNMPI_BCAST_MAX_TREES];       /* end markers still to send */
    struct sdnmpi_wire_hdr h = {.tag = t->tag, .epoch = epoch, .round = (uint16_t)round};
    const int n = t->n;
    int retries = 0;
    *sent = 0;
    for (int j = 0; j < n; j++) {
        sdnmpi_pacer_init(&pacer[j], t->rate_mbps[j]);
        next[j] = (uint64_t)j;
        sent_on[j] = 0;
        ends[j] = END_MARKERS;
    }
    for (;;) {
        int j = -1;
        double due = 0;
        for (int k = 0; k < n; k++) {
            while (next[k] < c->n && need != NULL && !sdnmpi_bcast_bit(need, (uint32_t)next[k]))
                next[k] += (uint64_t)n;
            if (next[k] >= c->n && ends[k] == 0)
                continue;
            double at = (double)pacer[k].start_ns + pacer[k].due_ns;
            if (j < 0 || at < due) {
                j = k;
                due = at;
            }
        }
        if (j < 0)
            return 0;
        if (next[j] < c->n) {
            uint32_t i = (uint32_t)next[j], len = sdnmpi_bcast_dgram_len(c, i);
            sdnmpi_pace(&pacer[j], (size_t)len + SDNMPI_WIRE_HEADER + SDNMPI_WIRE_OVERHEAD);
            h.kind = SDNMPI_WIRE_DATA;
            h.index = i;
            if (send_one(t->fd[j], &h, c->data + (uint64_t)i * c->payload, len, &retries))
                return -1;
            ++*sent;
            sent_on[j]++;
            next[j] += (uint64_t)n;
        } else {
            sdnmpi_pace(&pacer[j], SDNMPI_WIRE_HEADER + SDNMPI_WIRE_OVERHEAD);
            h.kind = SDNMPI_WIRE_END;
            h.index = sent_on[j];
            if (send_one(t->fd[j], &h, NULL, 0, &retries))
                return -1;
            ends[j]--;
        }
    }
}

void sdnmpi_bcast_adapt_rate(struct sdnmpi_bcast_tree *t, int j, const struct sdnmpi_bcast_comm *bc,
                             int root, int round, uint64_t loss_word)
{
    const double ceiling = sdnmpi_g.cfg.bcast_rate_mbps, floor = ceiling / RATE_FLOOR_DIV;
    int worst = loss_word ? 63 - __builtin_clzll(loss_word) : 0;
    double old = t->rate_mbps[j], rate = old;
    if (worst >= 10)
        rate = old / 2;
    else if (worst >= 5)
        rate = old * 3 / 4;
    else if (round == 0 && worst <= 1)
        rate = old * 5 / 4;
    rate = rate < floor ? floor : rate > ceiling ? ceiling : rate;
    if (rate != old)
        sdnmpi_log("bcast comm=%" PRId64 " root=%d round=%d tree=%d: worst receiver lost %d%%, rate "
                   "%.1f -> %.1f Mbit/s",
                   bc->comm_id, root, round, j, worst, old, rate);
    t->rate_mbps[j] = rate;
}
