/*
 * bcast_plan.h -- per-communicator Bcast state and per-(communicator, root) multicast trees,
 * cached in an MPI attribute (its own keyval, next to plan.c's).
 *
 * The first large SDN_MPI_Bcast on a communicator makes its private communicator (the protocol's
 * MPI messages travel on it): one Allreduce on the communicator agrees on rank 0's communicator id
 * and creation tag, and on whether every rank has memory and the library's communicator; then a
 * PMPI_Comm_create_group of the communicator's ranks on the library's communicator (plan_comm.h:
 * never a context-id agreement on the application's communicator, which Open MPI 4.1.4 can hang
 * against a pending MPI_Comm_idup of it), or, without the library's communicator on some rank, a
 * duplicate of the communicator as before. It then gathers every rank's fabric address to every
 * rank. The first one for a root then makes the tree:
 * rank 0 sends plan_bcast {job, comm, root's host, every rank's host} and broadcasts the reply
 * (group, port, or failure); every rank opens its socket (the root a sender, the others a
 * receiver joined to the group) and all agree that every socket opened. The outcome, good or
 * bad, is cached, so every later call for that root costs no controller round trip and every
 * rank decides alike.
 */
#ifndef SDNMPI_BCAST_PLAN_H
#define SDNMPI_BCAST_PLAN_H

#include <mpi.h>
#include <stdint.h>

#include "env.h"

/* UNPLANNED also after the protocol decided to ask the controller again (bcast_mcast.h). */
enum { SDNMPI_TREE_UNPLANNED = 0, SDNMPI_TREE_OK = 1, SDNMPI_TREE_FAILED = -1 };

/* The multicast trees of one root (issue 17: the message is split over them, datagram i on tree
 * i mod n; one tree from a controller that predates that, or with SDN_MPI_BCAST_TREES=1). */
struct sdnmpi_bcast_tree {
    int state;        /* SDNMPI_TREE_*, agreed by all ranks */
    int n;            /* trees, 1..SDNMPI_BCAST_MAX_TREES (agreed) */
    uint32_t group[SDNMPI_BCAST_MAX_TREES]; /* multicast addresses, network byte order */
    uint16_t port[SDNMPI_BCAST_MAX_TREES];  /* UDP ports */
    int fd[SDNMPI_BCAST_MAX_TREES];         /* the root's senders or this rank's receivers; -1 */
    uint32_t tag;     /* in every datagram: job, communicator and root */
    uint32_t epoch;   /* SDN_MPI_Bcast calls on these trees so far (identical on all ranks) */
    int blackouts;    /* calls in a row in which round 0 reached some rank not at all (agreed) */
    int replans;      /* plans after the first one (bcast_mcast.c) */
    /* the root's pacing rate per tree: SDN_MPI_BCAST_RATE_MBPS, lower after losses on that tree */
    double rate_mbps[SDNMPI_BCAST_MAX_TREES];
};

struct sdnmpi_bcast_comm {
    MPI_Comm priv;                   /* the private communicator: comm's ranks, comm's order */
    int rank, size;
    int64_t comm_id;                 /* the id sent to the controller (rank 0's choice) */
    uint32_t *ips;                   /* every rank's fabric address, network byte order */
    int hosts;                       /* distinct addresses among ips */
    struct sdnmpi_bcast_tree *trees; /* [size], by root */
};

/* Creates the attribute keyval (SDN_MPI_Init) / frees it and the state of MPI_COMM_WORLD and
 * MPI_COMM_SELF (SDN_MPI_Finalize). MPI error codes. */
int sdnmpi_bcast_keyval_create(void);
int sdnmpi_bcast_keyval_free(void);

/* Closes the sockets of a root's trees (a no-op for those that are closed). */
void sdnmpi_bcast_tree_close(struct sdnmpi_bcast_tree *t);

/* The Bcast state of `comm` with the tree of `root` planned (collective over comm the first time
 * for the communicator and the first time for the root). *out is NULL, on every rank alike, if
 * some rank ran out of memory (fall back for this call; the next call tries again). MPI error
 * code. */
int sdnmpi_bcast_tree_get(MPI_Comm comm, int root, struct sdnmpi_bcast_comm **out);

#endif
