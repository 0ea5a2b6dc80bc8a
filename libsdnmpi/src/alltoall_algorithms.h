/* alltoall_algorithms.h -- the SDN alltoall algorithm(s), as the dispatcher (alltoall.c) calls
 * them (allreduce_algorithms.h's shape: one call description, one function per algorithm and
 * translation unit; they know nothing of the dispatcher, the plan or the library's state).
 *
 * On call->comm (a plan's private communicator), contiguous bytes: the block for priv rank q is at
 * sendbuf + orig[q] x block, the block from priv rank q goes to recvbuf + orig[q] x block. sendbuf
 * and recvbuf do not overlap (the dispatcher copies for MPI_IN_PLACE). MPI error code. */
#ifndef SDNMPI_ALLTOALL_ALGORITHMS_H
#define SDNMPI_ALLTOALL_ALGORITHMS_H

#include <mpi.h>
#include <stddef.h>

struct sdnmpi_alltoall_call {
    const void *sendbuf;
    void *recvbuf;
    size_t block;    /* bytes per rank pair, <= INT_MAX */
    MPI_Comm comm;
    const int *orig; /* sdnmpi_rank_map */
    int window;      /* steps in flight at once (clamped to 1 .. p-1) */
};

typedef int (*sdnmpi_alltoall_fn)(const struct sdnmpi_alltoall_call *call);

/* Pairwise exchange, p - 1 steps, each a permutation (sdnmpi_alltoall_peer): the steps whose
 * routes alltoall_plan.h asks the controller for; call->window of them in flight at once. */
int sdnmpi_alltoall_intra_pairwise(const struct sdnmpi_alltoall_call *call);

/* The shift of step k (1 .. p-1): 1, 2, .., p/2, then p-1, p-2, .., p/2+1. Steps k and p-k send in
 * opposite directions between the same ranks; this order keeps them about p/2 steps apart, so two
 * steps in flight together never use one connection both ways (except step p/2, for p even). */
int sdnmpi_alltoall_shift(int k, int p);

/* Whom rank q sends to (*to) and receives from (*from) at step k (1 .. p-1) of the pairwise
 * exchange: q + d and q - d (mod p), d = sdnmpi_alltoall_shift(k, p). Not an exchange (q XOR k):
 * Open MPI's TCP transport carries a large message's rendezvous replies (ACK, PUT) on the same
 * connection as data going the other way, behind it, so a swap of two large blocks over one
 * connection runs at about half the link rate (libsdnmpi/README.md, measured). */
void sdnmpi_alltoall_peer(int q, int k, int p, int *to, int *from);

#endif
