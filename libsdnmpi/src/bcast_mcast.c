/* bcast_mcast.c -- the rounds of SDN_MPI_Bcast on a multicast tree (bcast_mcast.h). */
#include "bcast_mcast.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bcast_wire.h"
#include "log.h"
#include "mcast.h"
#include "state.h"

#define FLAG_STOP 1u          /* flag word: a rank cannot go on with multicast */
#define FLAG_NOTHING 2u       /* flag word: a rank that needed datagrams heard nothing at all */
#define FLAG_TREE_SILENT 4u   /* flag word: ... heard nothing on one of the trees it needed */
#define MAX_BLACKOUTS 2       /* calls in a row with FLAG_NOTHING or FLAG_TREE_SILENT in round 0:
                                 plan the trees again */
#define MAX_REPLANS 2         /* plans after the first; then the tree is given up */
#define END_MARKERS 3         /* end-of-round markers per round */
#define POLL_MS 10            /* receivers check the root's signal this often */
#define NOBUFS_RETRIES 1000   /* per round, 1 ms apart */
#define MAX_FINISH_RUNS 64    /* more runs of missing datagrams: PMPI_Bcast the whole message */
#define LOSS_SAMPLE 20        /* a receiver reports its loss if it needed at least this many */
#define RATE_FLOOR_DIV 16     /* the rate never drops below the knob / this */
/* need[]: the bitmap's words, then the flag word, then one loss word per tree */
#define NEED_EXTRA (1 + SDNMPI_BCAST_MAX_TREES)

static int bit(const uint64_t *map, uint32_t i)
{
    return (int)((map[i / 64] >> (i % 64)) & 1u);
}

static void set_bit(uint64_t *map, uint32_t i)
{
    map[i / 64] |= (uint64_t)1 << (i % 64);
}

int sdnmpi_bcast_call_init(struct sdnmpi_bcast_call *c, void *buffer, uint64_t bytes,
                           int datagram, int is_root, const char **why)
{
    memset(c, 0, sizeof *c);
    c->data = buffer;
    c->bytes = bytes;
    c->payload = (uint32_t)(datagram - SDNMPI_WIRE_HEADER);
    uint64_t n = (bytes + c->payload - 1) / c->payload;
    if (n >= UINT32_MAX - SDNMPI_BCAST_MAX_TREES || n / 64 + NEED_EXTRA + 1 > (uint64_t)INT_MAX) {
        *why = "message too large for the multicast protocol";
        return -1;
    }
    c->n = (uint32_t)n;
    c->words = (size_t)((n + 63) / 64);
    c->need = calloc(c->words + NEED_EXTRA, sizeof *c->need);
    if (!is_root) {
        c->have = calloc(c->words, sizeof *c->have);
        c->dgram_cap = (size_t)datagram;
        c->dgram = malloc(c->dgram_cap);
        c->missing = c->n;
    }
    if (c->need == NULL || (!is_root && (c->have == NULL || c->dgram == NULL))) {
        sdnmpi_bcast_call_free(c);
        *why = "out of memory";
        return -1;
    }
    return 0;
}

void sdnmpi_bcast_call_free(struct sdnmpi_bcast_call *c)
{
    free(c->need);
    free(c->have);
    free(c->dgram);
    c->need = c->have = NULL;
    c->dgram = NULL;
}

static uint32_t dgram_len(const struct sdnmpi_bcast_call *c, uint32_t i)
{
    uint64_t off = (uint64_t)i * c->payload;
    uint64_t left = c->bytes - off;
    return left < c->payload ? (uint32_t)left : c->payload;
}

/* ---- the root ---------------------------------------------------------------------------- */

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

/* Multicasts the datagrams marked in `need` (NULL: all), datagram i on tree i mod n, each tree
 * paced at its own rate (the next datagram to go is the one due first), then the end markers of
 * every tree on that tree. 0, or -1 if a send failed (the rest of the round is not sent). */
static int send_round(const struct sdnmpi_bcast_tree *t, const struct sdnmpi_bcast_call *c,
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
            while (next[k] < c->n && need != NULL && !bit(need, (uint32_t)next[k]))
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
            uint32_t i = (uint32_t)next[j], len = dgram_len(c, i);
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

/* ---- the receivers ----------------------------------------------------------------------- */

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
            || (size_t)n != SDNMPI_WIRE_HEADER + dgram_len(c, h.index) || bit(c->have, h.index))
            continue;
        memcpy(c->data + (uint64_t)h.index * c->payload, c->dgram + SDNMPI_WIRE_HEADER,
               (size_t)n - SDNMPI_WIRE_HEADER);
        set_bit(c->have, h.index);
        c->missing--;
        *got = 1;
    }
}

/* Receives until complete, the round's end marker on every tree, or (once the root's Ibcast `req` says it is
 * done) SDN_MPI_BCAST_IDLE_MS without a datagram. Completes `req`. Returns 0, or 1 if this rank
 * cannot go on with multicast (socket error, or the root's sends failed). `how` says why the
 * loop ended; heard[j] whether anything of this call arrived on tree j. */
static int receive_round(const struct sdnmpi_bcast_tree *t, struct sdnmpi_bcast_call *c,
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

/* ---- the rounds -------------------------------------------------------------------------- */

/* Runs of set bits in map[0..n); *too_long if one is longer than INT_MAX bytes. */
static uint32_t count_runs(const struct sdnmpi_bcast_call *c, const uint64_t *map, int *too_long)
{
    uint32_t runs = 0;
    *too_long = 0;
    for (uint32_t i = 0; i < c->n;) {
        if (!bit(map, i)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < c->n && bit(map, j))
            j++;
        uint64_t len = (uint64_t)(j - i) * c->payload;
        if (len > INT_MAX)
            *too_long = 1;
        runs++;
        i = j;
    }
    return runs;
}

/* PMPI_Bcast of the datagrams marked in `need`: one per run, or (*whole) the whole message. */
static int finish(struct sdnmpi_bcast_comm *bc, int root, const struct sdnmpi_bcast_call *c,
                  const uint64_t *need, int count, MPI_Datatype datatype, int *whole)
{
    int too_long = 0;
    uint32_t runs = count_runs(c, need, &too_long);
    *whole = runs > MAX_FINISH_RUNS || too_long;
    if (*whole)
        return PMPI_Bcast(c->data, count, datatype, root, bc->priv);
    for (uint32_t i = 0; i < c->n;) {
        if (!bit(need, i)) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < c->n && bit(need, j))
            j++;
        uint64_t off = (uint64_t)i * c->payload;
        uint64_t end = (uint64_t)j * c->payload;
        if (end > c->bytes)
            end = c->bytes;
        int rc = PMPI_Bcast(c->data + off, (int)(end - off), MPI_BYTE, root, bc->priv);
        if (rc != MPI_SUCCESS)
            return rc;
        i = j;
    }
    return MPI_SUCCESS;
}

static uint32_t popcount_map(const uint64_t *map, size_t words)
{
    uint32_t n = 0;
    for (size_t w = 0; w < words; w++)
        n += (uint32_t)__builtin_popcountll(map[w]);
    return n;
}

/* The root: adapts tree j's rate to the worst receiver's loss on it in a round (bcast_mcast.h). */
static void adapt_rate(struct sdnmpi_bcast_tree *t, int j, const struct sdnmpi_bcast_comm *bc,
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

/* This receiver's loss in a round as a bit of the loss word: bit k = k % (0..63) of the
 * `needed` datagrams it missed; 0 (no bit) if it needed too few to tell. */
static uint64_t loss_bit(uint32_t needed, uint32_t missing)
{
    if (needed < LOSS_SAMPLE)
        return 0;
    uint64_t pct = (uint64_t)missing * 100 / needed;
    return (uint64_t)1 << (pct > 63 ? 63 : pct);
}

/* Receivers: per tree j, the datagrams i = j mod n not received yet. */
static void missing_per_tree(const struct sdnmpi_bcast_call *c, int n, uint32_t out[])
{
    for (int j = 0; j < n; j++)
        out[j] = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (!bit(c->have, i))
            out[i % (uint32_t)n]++;
}

int sdnmpi_bcast_run(struct sdnmpi_bcast_comm *bc, int root, struct sdnmpi_bcast_call *c, int count,
                     MPI_Datatype datatype, struct sdnmpi_bcast_stats *st)
{
    struct sdnmpi_bcast_tree *t = &bc->trees[root];
    const int is_root = bc->rank == root;
    const int rounds = sdnmpi_g.cfg.bcast_rounds;
    const uint32_t epoch = t->epoch++;
    const int64_t t0 = sdnmpi_now_ns();
    int rc;
    memset(st, 0, sizeof *st);

    for (int round = 0;; round++) {
        int64_t sig = 1; /* the root's "round sent": 1 ok, 0 its sends failed */
        MPI_Request req = MPI_REQUEST_NULL;
        int stop = 0;
        if (is_root) {
            uint32_t sent = 0;
            int64_t r0 = sdnmpi_now_ns();
            if (send_round(t, c, epoch, round, round == 0 ? NULL : c->need, &sent) != 0) {
                sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " round=%d: send failed "
                           "after %" PRIu32 " datagrams (%s)",
                           bc->comm_id, root, epoch, round, sent, strerror(errno));
                sig = 0;
                stop = 1;
            } else if (sdnmpi_log_enabled()) {
                double s = (double)(sdnmpi_now_ns() - r0) / 1e9;
                sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " round=%d: sent %" PRIu32
                           " datagrams in %.3fs",
                           bc->comm_id, root, epoch, round, sent, s);
            }
            if ((rc = PMPI_Ibcast(&sig, 1, MPI_INT64_T, root, bc->priv, &req)) != MPI_SUCCESS
                || (rc = PMPI_Wait(&req, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return rc;
            memset(c->need, 0, (c->words + NEED_EXTRA) * sizeof *c->need);
        } else {
            const char *how = "";
            const uint32_t needed = c->missing;
            uint32_t needed_on[SDNMPI_BCAST_MAX_TREES], missing_on[SDNMPI_BCAST_MAX_TREES];
            int heard[SDNMPI_BCAST_MAX_TREES] = {0}, heard_any = 0, silent = 0;
            missing_per_tree(c, t->n, needed_on);
            if ((rc = PMPI_Ibcast(&sig, 1, MPI_INT64_T, root, bc->priv, &req)) != MPI_SUCCESS)
                return rc;
            stop = receive_round(t, c, epoch, round, &req, &sig, &how, heard, &rc);
            if (rc != MPI_SUCCESS)
                return rc;
            sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " round=%d: have %" PRIu32
                       " of %" PRIu32 " datagrams (%s)",
                       bc->comm_id, root, epoch, round, c->n - c->missing, c->n, how);
            for (size_t w = 0; w < c->words; w++)
                c->need[w] = ~c->have[w];
            if (c->n % 64)
                c->need[c->words - 1] &= ((uint64_t)1 << (c->n % 64)) - 1;
            c->need[c->words] = 0;
            missing_per_tree(c, t->n, missing_on);
            for (int j = 0; j < t->n; j++)
                c->need[c->words + 1 + j] = loss_bit(needed_on[j], missing_on[j]);
            for (int j = 0; j < t->n; j++) {
                heard_any |= heard[j];
                silent |= needed_on[j] > 0 && !heard[j];
            }
            if (needed > 0 && !heard_any)
                c->need[c->words] |= FLAG_NOTHING;
            else if (silent)
                c->need[c->words] |= FLAG_TREE_SILENT;
        }
        if (stop)
            c->need[c->words] |= FLAG_STOP;
        rc = PMPI_Allreduce(MPI_IN_PLACE, c->need, (int)(c->words + 1 + (size_t)t->n), MPI_UINT64_T,
                            MPI_BOR, bc->priv);
        if (rc != MPI_SUCCESS)
            return rc;
        if (is_root)
            for (int j = 0; j < t->n; j++)
                adapt_rate(t, j, bc, root, round, c->need[c->words + 1 + j]);
        st->rounds = round + 1;
        uint32_t missing = popcount_map(c->need, c->words);
        int stopped = (c->need[c->words] & FLAG_STOP) != 0;
        int nothing = (c->need[c->words] & FLAG_NOTHING) != 0;
        int silent = (c->need[c->words] & FLAG_TREE_SILENT) != 0;
        if (round == 0)
            t->blackouts = nothing || silent ? t->blackouts + 1 : 0;
        if (missing == 0) {
            st->path = SDNMPI_BCAST_MCAST;
            break;
        }
        if (stopped || nothing || silent || round + 1 >= rounds) {
            if (is_root)
                sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " round=%d: %" PRIu32
                           " datagrams missing somewhere, finishing them with PMPI_Bcast (%s)",
                           bc->comm_id, root, epoch, round, missing,
                           stopped   ? "a rank cannot go on with multicast"
                           : nothing ? "a rank heard nothing of this round"
                           : silent  ? "a rank heard nothing of one of the trees"
                                     : "no rounds left");
            int whole = 0;
            st->path = SDNMPI_BCAST_MCAST_PMPI;
            if ((rc = finish(bc, root, c, c->need, count, datatype, &whole)) != MPI_SUCCESS)
                return rc;
            st->finished = whole ? c->n : missing;
            break;
        }
        if (is_root)
            sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " round=%d: %" PRIu32
                       " datagrams missing somewhere, multicasting them again",
                       bc->comm_id, root, epoch, round, missing);
        st->resent += missing;
    }
    if (t->blackouts >= MAX_BLACKOUTS) {
        /* Agreed: every rank saw the same flags. The controller may have dropped the tree (after
         * a topology change): ask again, a few times. */
        if (t->replans < MAX_REPLANS) {
            t->replans++;
            t->state = SDNMPI_TREE_UNPLANNED;
            if (bc->rank == 0)
                sdnmpi_log("bcast comm=%" PRId64 " root=%d: %d calls in a row reached some rank "
                           "not at all, planning the tree again (%d of %d)",
                           bc->comm_id, root, t->blackouts, t->replans, MAX_REPLANS);
        } else {
            t->state = SDNMPI_TREE_FAILED;
            if (bc->rank == 0)
                sdnmpi_log("bcast comm=%" PRId64 " root=%d: %d calls in a row reached some rank "
                           "not at all, PMPI_Bcast for this root from now on",
                           bc->comm_id, root, t->blackouts);
        }
        sdnmpi_bcast_tree_close(t);
    }
    if (sdnmpi_log_enabled() && is_root) {
        double s = (double)(sdnmpi_now_ns() - t0) / 1e9;
        sdnmpi_log("bcast comm=%" PRId64 " root=%d epoch=%" PRIu32 " bytes=%" PRIu64 " datagrams=%"
                   PRIu32 ": %s, %d round%s, %" PRId64 " resent, %" PRId64 " by PMPI_Bcast, in "
                   "%.3fs (%.1f Mbit/s; %d tree%s, pacing tree 0 now %.1f Mbit/s)",
                   bc->comm_id, root, epoch, c->bytes, c->n,
                   st->path == SDNMPI_BCAST_MCAST ? "multicast" : "multicast + PMPI_Bcast",
                   st->rounds, st->rounds == 1 ? "" : "s", st->resent, st->finished, s,
                   s > 0 ? (double)c->bytes * 8 / s / 1e6 : 0.0, t->n, t->n == 1 ? "" : "s",
                   t->rate_mbps[0]);
    }
    return MPI_SUCCESS;
}
