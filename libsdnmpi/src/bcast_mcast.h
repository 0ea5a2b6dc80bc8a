/*
 * bcast_mcast.h -- SDN_MPI_Bcast's protocol on a planned multicast tree (bcast_plan.h).
 *
 * The message (contiguous bytes) is cut into datagrams of SDN_MPI_BCAST_DATAGRAM bytes: a 20-byte
 * header (magic, tree tag, epoch = the tree's call counter, round, kind, datagram index) and up to
 * SDN_MPI_BCAST_DATAGRAM - 20 payload bytes. With n trees (issue 17: one per spine, the
 * controller's answer to SDN_MPI_BCAST_TREES) datagram i travels on tree i mod n, each tree its own
 * group, port and socket; everything below about rates and end markers is per tree. Then, in rounds:
 *
 *  1. The root multicasts the datagrams (round 0: all of them; later rounds: those some rank
 *     still misses), each tree paced at its own rate counting Ethernet/IP/UDP headers (the next
 *     datagram to go is the one whose tree is due first), then three end-of-round markers per
 *     tree; then it posts a PMPI_Ibcast saying that it is done (and whether its sends worked).
 *     A tree's rate starts at SDN_MPI_BCAST_RATE_MBPS; when the receiver that lost most of that
 *     tree's datagrams lost 5 % or more of what it needed from it in a round, the root lowers
 *     that tree's rate (x 3/4; 10 % or more: halves it; never below 1/16 of the knob), and every
 *     call whose first round lost at most 1 % of the tree's datagrams anywhere raises it by a
 *     quarter again, up to the knob. Random loss spread over the receivers (the union is large,
 *     each receiver's share small) does not slow it.
 *  2. Every other rank posts that PMPI_Ibcast first and reads datagrams (from every tree's
 *     socket) into the buffer until it has them all, or it has seen the round's end marker on
 *     every tree, or the Ibcast has completed and no
 *     datagram came for SDN_MPI_BCAST_IDLE_MS. While the root is still sending, a receiver waits
 *     as long as PMPI_Bcast would; after that, at most the idle time: it never hangs.
 *  3. All ranks PMPI_Allreduce (MPI_BOR) a bitmap of the datagrams they miss plus a flag word
 *     (a socket failed somewhere) and a loss word per tree (bit k set: a receiver lost k % of
 *     the datagrams it needed from that tree in this round), so they all know the union and
 *     decide alike: nothing missing ends the call; otherwise another round, unless this was round
 *     SDN_MPI_BCAST_ROUNDS or the flag is set: then the missing datagrams are finished with
 *     PMPI_Bcast on the private communicator (one per run of missing datagrams, or the whole
 *     message if there are more than 64 runs). Either way every rank ends with the root's bytes. A
 *     receiver that needed datagrams but heard nothing of the round (no data, no end marker) sets
 *     a second flag, and one that heard nothing on one of the trees it needed datagrams from sets
 *     a third (the controller dropped that tree, e.g. after its spine failed): the rest then goes
 *     to PMPI_Bcast at once. After two calls in a row whose first round reached some rank not at
 *     all, or not on some tree, the trees are planned again (the controller drops trees after
 *     a topology change), twice at most; then they are given up and every later call for
 *     that root falls back. The flags are agreed, so all ranks do this together.
 */
#ifndef SDNMPI_BCAST_MCAST_H
#define SDNMPI_BCAST_MCAST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "bcast_plan.h"
#include "state.h"

/* The buffers of one call; allocate on every rank before agreeing to use the tree. */
struct sdnmpi_bcast_call {
    unsigned char *data; /* the user's buffer (contiguous) */
    uint64_t bytes;
    uint32_t payload;    /* payload bytes per datagram */
    uint32_t n;          /* datagrams */
    size_t words;        /* 64-bit words of a datagram bitmap */
    uint64_t *have;      /* receivers: datagrams received */
    uint32_t missing;    /* receivers: datagrams not yet received */
    uint64_t *need;      /* words + 1 + SDNMPI_BCAST_MAX_TREES: the agreed bitmap of missing
                            datagrams, the flags, a loss word per tree (bit k: some receiver lost
                            k % of what it needed from that tree) */
    unsigned char *dgram;/* receivers: one datagram */
    size_t dgram_cap;
};

/* 0, or -1: out of memory or a message too large for the protocol (`why` says which). */
int sdnmpi_bcast_call_init(struct sdnmpi_bcast_call *c, void *buffer, uint64_t bytes,
                           int datagram, int is_root, const char **why);
void sdnmpi_bcast_call_free(struct sdnmpi_bcast_call *c);

/* Runs the protocol (collective over bc->priv). count/datatype are the user's (used for a
 * whole-message PMPI_Bcast). Fills *st. MPI error code. */
int sdnmpi_bcast_run(struct sdnmpi_bcast_comm *bc, int root, struct sdnmpi_bcast_call *c, int count,
                     MPI_Datatype datatype, struct sdnmpi_bcast_stats *st);

#endif
