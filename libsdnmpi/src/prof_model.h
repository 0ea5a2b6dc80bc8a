/* prof_model.h -- the "pmpi" source's picture of a collective: the messages this rank sends in
 * the standard algorithm (as in MPICH's defaults; docs/profiler.md lists them), one algorithm per
 * function. They only count (prof_count_send); the real collective is the MPI library's. */
#ifndef SDNMPI_PROF_MODEL_H
#define SDNMPI_PROF_MODEL_H

#include <mpi.h>
#include <stdint.h>

/* An intracommunicator as the models see it: world[i] is its rank i's world rank; me is ours. */
struct prof_coll {
    const int *world;
    int n;
    int me;
};

/* Binomial tree from root: every rank but the root receives the whole message once. */
void prof_model_bcast_binomial(const struct prof_coll *c, int root, uint64_t bytes);
/* Binomial tree to root: every rank but the root sends the whole vector once. */
void prof_model_reduce_binomial(const struct prof_coll *c, int root, uint64_t bytes);
/* Recursive doubling; with p not a power of two, the first 2r ranks (r = p - 2^floor(log2 p))
 * fold pairwise into r before and unfold after. The whole vector every step. */
void prof_model_allreduce_recursive_doubling(const struct prof_coll *c, uint64_t bytes);
/* Dissemination: in step k, a 0-byte message to rank me + 2^k (mod p). */
void prof_model_barrier_dissemination(const struct prof_coll *c);
/* Ring: p - 1 steps; in step s this rank forwards block (me - s) mod p to me + 1. blocks[i]: rank
 * i's block in bytes, or NULL for all = bytes. */
void prof_model_allgather_ring(const struct prof_coll *c, const uint64_t *blocks, uint64_t bytes);
/* Pairwise exchange: block i straight to rank i (blocks as above; zero-byte blocks not sent). */
void prof_model_alltoall_pairwise(const struct prof_coll *c, const uint64_t *blocks, uint64_t bytes);
/* Linear gather: every rank but the root sends its `bytes` to the root. */
void prof_model_gather_linear(const struct prof_coll *c, int root, uint64_t bytes);
/* Linear scatter: the root sends block i to every rank i != root (blocks as above). */
void prof_model_scatter_linear(const struct prof_coll *c, int root, const uint64_t *blocks, uint64_t bytes);
/* Recursive doubling scan: in step k, the partial result to rank me XOR 2^k if it exists. */
void prof_model_scan_recursive_doubling(const struct prof_coll *c, uint64_t bytes);

/* prof_coll.c, for the wrappers of prof_coll.c and prof_icoll.c: counts the call and fills *c;
 * 0 when nothing is to be modelled (not active, the mpi_t source, an intercommunicator). */
int prof_coll_modelled(MPI_Comm comm, struct prof_coll *c);
/* counts[i] elements of type, in bytes, in a scratch array (NULL if out of memory). */
const uint64_t *prof_coll_blocks(const int *counts, MPI_Datatype type, int n);

#endif
