/*
 * schedule.h -- the rank pairs of recursive doubling, exactly primitives/schedule.py's
 * recursive_doubling_steps(p), and their mapping to host pairs (host_steps()).
 *
 * For p = pof2 + rem (pof2 the largest power of two <= p): when rem > 0, step 0 folds even rank 2i
 * into 2i+1 (i < rem); the pof2 "participants" (odd ranks below 2*rem, then every rank from 2*rem
 * on; participant v is rank rd_rank(v)) exchange at distance 1, 2, 4, ...; a last step sends
 * 2i+1's result back to 2i. Recursive doubling and Rabenseifner (allreduce_*.c) use these helpers,
 * so the routes the controller installs are the routes the data takes.
 */
#ifndef SDNMPI_SCHEDULE_H
#define SDNMPI_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

void sdnmpi_rd_geometry(int p, int *pof2, int *rem);
/* The participant index of `rank`, or -1 for an even rank below 2*rem (folded out). */
int sdnmpi_rd_vrank(int rank, int rem);
/* The rank of participant v. */
int sdnmpi_rd_rank(int v, int rem);
/* Number of steps of the schedule. */
int sdnmpi_rd_nsteps(int p);
/* The directed rank pairs (src[i] -> dst[i]) of step s (0-based); src/dst hold p entries.
 * Returns the number of pairs. */
int sdnmpi_rd_step_pairs(int p, int s, int *src, int *dst);

/* Most distances a schedule can have (pof2 <= 2^30 for an int p). */
#define SDNMPI_RD_MAX_DIMS 31

/* The order in which Rabenseifner's reduce-scatter halves the vector: dist[0] gets half of it,
 * dist[1] a quarter, ... (its allgather runs the reverse order). Every distance 1, 2, ...,
 * pof2/2 appears once. The cheapest step should move the most bytes, so distances are sorted by
 * (1) step_load[step of the distance], the flows on the step's busiest switch link as the
 * controller reported them (max_load, docs/rpc.md), when it reported every step (nloads >=
 * sdnmpi_rd_nsteps(p); step_load may be NULL); (2) how many of the distance's participant pairs
 * live on different hosts (rank_ip; may be NULL); (3) the distance itself, smallest first, as
 * Open MPI and MPICH do (neighbouring ranks tend to be close). Deterministic, so every rank
 * computes the same order. Returns the number of distances written to dist (0 if p < 2). */
int sdnmpi_rab_order(int p, const uint32_t *rank_ip, const int64_t *step_load, size_t nloads,
                     int *dist);

struct sdnmpi_host_pair {
    uint32_t src, dst; /* IPv4, network byte order; src != dst */
    uint32_t count;    /* how many rank pairs of the step go from src to dst */
};

struct sdnmpi_host_steps {
    int nsteps;
    size_t npairs;                  /* over all steps */
    size_t *start;                  /* nsteps + 1 offsets: step s is pairs[start[s]..start[s+1]) */
    struct sdnmpi_host_pair *pairs; /* within a step sorted by (dotted src, dotted dst) */
};

enum { SDNMPI_STEPS_OK = 0, SDNMPI_STEPS_NOMEM = -1, SDNMPI_STEPS_TOO_MANY = -2, SDNMPI_STEPS_INVALID = -3 };

/* The host pairs of the schedule for p ranks, rank r living on host rank_ip[r]: same-host pairs
 * dropped, duplicates merged into counts, empty steps kept (host_steps() in Python). At most
 * max_pairs pairs in all (else SDNMPI_STEPS_TOO_MANY); p >= 1 (else SDNMPI_STEPS_INVALID). */
int sdnmpi_host_steps_build(int p, const uint32_t *rank_ip, size_t max_pairs,
                            struct sdnmpi_host_steps *out);
void sdnmpi_host_steps_free(struct sdnmpi_host_steps *hs);

/* The directed rank pairs (src[i] -> dst[i], ranks < p) of step s of some schedule; at most the
 * max_step_pairs given below. Returns the number of pairs. */
typedef int (*sdnmpi_step_pairs_fn)(const void *ctx, int s, int *src, int *dst);

/* sdnmpi_host_steps_build for any schedule of nsteps steps of p ranks: step_pairs(ctx, s, ...)
 * gives step s's rank pairs (at most max_step_pairs). */
int sdnmpi_host_steps_from(int p, int nsteps, int max_step_pairs, sdnmpi_step_pairs_fn step_pairs,
                           const void *ctx, const uint32_t *rank_ip, size_t max_pairs,
                           struct sdnmpi_host_steps *out);

#endif
