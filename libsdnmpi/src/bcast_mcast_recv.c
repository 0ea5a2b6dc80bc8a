/* bcast_mcast_recv.c -- a receiver's side of a multicast round: reading every tree's socket until
 * the round is over, and its loss per tree (bcast_mcast_steps.h). */
#include "bcast_mcast_steps.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

#include "bcast_wire.h"
#include "mcast.h"
#include "state.h"

#define POLL_MS 10            /* receivers check the root's signal this often */
#define LOSS_SAMPLE 20        /* a receiver reports its loss if it needed at least this many */

enum { RX_MORE = 0, RX_END = 1, RX_ERROR = -1 };

/* Reads every datagram waiting on one tree's socket. RX_END if this round's end marker was among
 * them. *got: a new
 * datagram arrived; *heard: anything of this call (data, also known data, or this round's end). */
static int drain(const struct sdnmpi_bcast_tree *t, int fd, struct sdnmpi_bcast_call *c,
                 uint32_t epoch, int round, int *got, int *heard)
{
    int end = 0;
    for (;;) {
        ssize_t n = sdnmpi_mcast_recv(fd, c->dgram, c->dgram_cap);
        if (n < 0)
            return RX_ERROR;
        if (n == 0)
            return end ? RX_END : RX_MORE;
        struct sdnmpi_wire_hdr h;
        if ((size_t)n > c->dgram_cap || sdnmpi_wire_decode(c->dgram, (size_t)n, &h) != 0
            || h.tag != t->tag || h.epoch != epoch)
            continue; /* not ours, or left over from an earlier call */
        if (h.kind == SDNMPI_WIRE_END) {
            end |= h.round == round;
            *heard |= h.round == round;
            continue;
        }
        *heard = 1;
        /* Data of any round of this call is good data. */
        if (h.kind != SDNMPI_WIRE_DATA || h.index >= c->n
            || (size_t)n != SDNMPI_WIRE_HEADER + sdnmpi_bcast_dgram_len(c, h.index)
            || sdnmpi_bcast_bit(c->have, h.index))
            continue;
        memcpy(c->data + (uint64_t)h.index * c->payload, c->dgram + SDNMPI_WIRE_HEADER,
               (size_t)n - SDNMPI_WIRE_HEADER);
        sdnmpi_bcast_set_bit(c->have, h.index);
        c->missing--;
        *got = 1;
    }
}

int sdnmpi_bcast_receive_round(const struct sdnmpi_bcast_tree *t, struct sdnmpi_bcast_call *c,
                               uint32_t epoch, int round, MPI_Request *req, const int64_t *sig,
                               const char **how, int heard[], int *rc)
{
    const int64_t idle_ns = (int64_t)sdnmpi_g.cfg.bcast_idle_ms * 1000000;
    int signalled = 0, stop = 0, ended = 0; /* ended: bit j, tree j's end marker came */
    int64_t mark = sdnmpi_now_ns(); /* the last datagram, or the root's signal */
    *how = "complete";
    *rc = MPI_SUCCESS;
    while (c->missing > 0) {
        int timeout = POLL_MS;
        if (signalled) {
            int64_t left = mark + idle_ns - sdnmpi_now_ns();
            timeout = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
        }
        struct pollfd pfd[SDNMPI_BCAST_MAX_TREES];
        for (int j = 0; j < t->n; j++)
            pfd[j] = (struct pollfd){.fd = t->fd[j], .events = POLLIN, .revents = 0};
        int pr = poll(pfd, (nfds_t)t->n, timeout);
        if (pr < 0 && errno != EINTR) {
            *how = "poll failed";
            stop = 1;
            break;
        }
        int dr = RX_MORE;
        for (int j = 0; pr > 0 && j < t->n && dr != RX_ERROR; j++) {
            if (!pfd[j].revents)
                continue;
            int got = 0;
            dr = drain(t, t->fd[j], c, epoch, round, &got, &heard[j]);
            if (got)
                mark = sdnmpi_now_ns();
            if (dr == RX_END)
                ended |= 1 << j;
        }
        if (dr == RX_ERROR) {
            *how = "receive failed";
            stop = 1;
            break;
        }
        if (c->missing == 0)
            break;
        if (ended == (1 << t->n) - 1) {
            *how = "end marker";
            break;
        }
        if (!signalled) {
            int flag = 0;
            if ((*rc = PMPI_Test(req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return 1;
            if (flag) {
                signalled = 1;
                int64_t now = sdnmpi_now_ns();
                if (now > mark)
                    mark = now;
                if (*sig == 0) {
                    *how = "the root's sends failed";
                    stop = 1;
                    break;
                }
            }
        } else if (sdnmpi_now_ns() - mark >= idle_ns) {
            *how = "idle timeout";
            break;
        }
    }
    if (!signalled && (*rc = PMPI_Wait(req, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return 1;
    return stop || (signalled && *sig == 0);
}

uint64_t sdnmpi_bcast_loss_bit(uint32_t needed, uint32_t missing)
{
    if (needed < LOSS_SAMPLE)
        return 0;
    uint64_t pct = (uint64_t)missing * 100 / needed;
    return (uint64_t)1 << (pct > 63 ? 63 : pct);
}

/* Receivers: per tree j, the datagrams i = j mod n not received yet. */
void sdnmpi_bcast_missing_per_tree(const struct sdnmpi_bcast_call *c, int n, uint32_t out[])
{
    for (int j = 0; j < n; j++)
        out[j] = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (!sdnmpi_bcast_bit(c->have, i))
            out[i % (uint32_t)n]++;
}
