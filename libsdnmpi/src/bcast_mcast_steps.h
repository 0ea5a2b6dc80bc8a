/* bcast_mcast_steps.h -- the steps of SDN_MPI_Bcast's multicast rounds (bcast_mcast.h), as the
 * rounds (bcast_mcast.c, sdnmpi_bcast_run) call them: the root's paced send round and its per-tree
 * rate (bcast_mcast_send.c), a receiver's round and its per-tree loss (bcast_mcast_recv.c), and
 * finishing by PMPI_Bcast what multicast did not deliver (bcast_mcast_finish.c). The steps know
 * nothing of the rounds and call neither them nor each other; what they share is the datagram
 * bitmap and size below. */
#ifndef SDNMPI_BCAST_MCAST_STEPS_H
#define SDNMPI_BCAST_MCAST_STEPS_H

#include <mpi.h>
#include <stdint.h>

#include "bcast_mcast.h"
#include "bcast_plan.h"

/* Datagram i's bit in a bitmap of c->words words. */
static inline int sdnmpi_bcast_bit(const uint64_t *map, uint32_t i)
{
    return (int)((map[i / 64] >> (i % 64)) & 1u);
}

static inline void sdnmpi_bcast_set_bit(uint64_t *map, uint32_t i)
{
    map[i / 64] |= (uint64_t)1 << (i % 64);
}

/* Payload bytes of datagram i (the last one may be short). */
static inline uint32_t sdnmpi_bcast_dgram_len(const struct sdnmpi_bcast_call *c, uint32_t i)
{
    uint64_t off = (uint64_t)i * c->payload;
    uint64_t left = c->bytes - off;
    return left < c->payload ? (uint32_t)left : c->payload;
}

/* ---- the root (bcast_mcast_send.c) ---- */

/* Multicasts the datagrams marked in `need` (NULL: all), datagram i on tree i mod n, each tree
 * paced at its own rate (the next datagram to go is the one due first), then the end markers of
 * every tree on that tree. 0, or -1 if a send failed (the rest of the round is not sent; errno
 * says why). *sent: the datagrams sent. */
int sdnmpi_bcast_send_round(const struct sdnmpi_bcast_tree *t, const struct sdnmpi_bcast_call *c,
                            uint32_t epoch, int round, const uint64_t *need, uint32_t *sent);

/* Adapts tree j's rate to the worst receiver's loss on it in a round (the agreed loss word of
 * tree j, sdnmpi_bcast_loss_bit; the rule: bcast_mcast.h). */
void sdnmpi_bcast_adapt_rate(struct sdnmpi_bcast_tree *t, int j, const struct sdnmpi_bcast_comm *bc,
                             int root, int round, uint64_t loss_word);

/* ---- the receivers (bcast_mcast_recv.c) ---- */

/* Receives until complete, the round's end marker on every tree, or (once the root's Ibcast `req`
 * says it is done) SDN_MPI_BCAST_IDLE_MS without a datagram. Completes `req`. Returns 0, or 1 if
 * this rank cannot go on with multicast (socket error, or the root's sends failed: *sig == 0).
 * `how` says why the loop ended; heard[j] whether anything of this call arrived on tree j; *rc an
 * MPI error of PMPI_Test/PMPI_Wait (then the return value is 1). */
int sdnmpi_bcast_receive_round(const struct sdnmpi_bcast_tree *t, struct sdnmpi_bcast_call *c,
                               uint32_t epoch, int round, MPI_Request *req, const int64_t *sig,
                               const char **how, int heard[], int *rc);

/* This receiver's loss in a round as a bit of the loss word: bit k = k % (0..63) of the
 * `needed` datagrams it missed; 0 (no bit) if it needed too few to tell. */
uint64_t sdnmpi_bcast_loss_bit(uint32_t needed, uint32_t missing);

/* Per tree j (of n), the datagrams i = j mod n not received yet. */
void sdnmpi_bcast_missing_per_tree(const struct sdnmpi_bcast_call *c, int n, uint32_t out[]);

/* ---- every rank (bcast_mcast_finish.c) ---- */

/* PMPI_Bcast on bc->priv of the datagrams marked in `need`: one per run of them, or (*whole set)
 * the whole message as count x datatype if there are too many runs or one longer than INT_MAX
 * bytes. MPI error code. */
int sdnmpi_bcast_finish(struct sdnmpi_bcast_comm *bc, int root, const struct sdnmpi_bcast_call *c,
                        const uint64_t *need, int count, MPI_Datatype datatype, int *whole);

#endif
