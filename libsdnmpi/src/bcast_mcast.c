/* bcast_mcast.c -- the rounds of SDN_MPI_Bcast on a multicast tree (bcast_mcast.h): each round's
 * agreement and what follows from it; the steps of a round are bcast_mcast_steps.h's. */
#include "bcast_mcast.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "bcast_mcast_steps.h"
#include "bcast_wire.h"
#include "log.h"
#include "state.h"

#define FLAG_STOP 1u          /* flag word: a rank cannot go on with multicast */
#define FLAG_NOTHING 2u       /* flag word: a rank that needed datagrams heard nothing at all */
#define FLAG_TREE_SILENT 4u   /* flag word: ... heard nothing on one of the trees it needed */
#define MAX_BLACKOUTS 2       /* calls in a row with FLAG_NOTHING or FLAG_TREE_SILENT in round 0:
                                 plan the trees again */
#define MAX_REPLANS 2         /* plans after the first; then the tree is given up */
/* need[]: the bitmap's words, then the flag word, then one loss word per tree */
#define NEED_EXTRA (1 + SDNMPI_BCAST_MAX_TREES)

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

static uint32_t popcount_map(const uint64_t *map, size_t words)
{
    uint32_t n = 0;
    for (size_t w = 0; w < words; w++)
        n += (uint32_t)__builtin_popcountll(map[w]);
    return n;
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
            if (sdnmpi_bcast_send_round(t, c, epoch, round, round == 0 ? NULL : c->need, &sent) != 0) {
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
            sdnmpi_bcast_missing_per_tree(c, t->n, needed_on);
            if ((rc = PMPI_Ibcast(&sig, 1, MPI_INT64_T, root, bc->priv, &req)) != MPI_SUCCESS)
                return rc;
            stop = sdnmpi_bcast_receive_round(t, c, epoch, round, &req, &sig, &how, heard, &rc);
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
            sdnmpi_bcast_missing_per_tree(c, t->n, missing_on);
            for (int j = 0; j < t->n; j++)
                c->need[c->words + 1 + j] = sdnmpi_bcast_loss_bit(needed_on[j], missing_on[j]);
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
                sdnmpi_bcast_adapt_rate(t, j, bc, root, round, c->need[c->words + 1 + j]);
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
            if ((rc = sdnmpi_bcast_finish(bc, root, c, c->need, count, datatype, &whole)) != MPI_SUCCESS)
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
