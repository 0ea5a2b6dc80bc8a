/* alltoall_sched.h -- the steps of SDN_MPI_Alltoall's pairwise exchange: which rank each rank
 * sends its block to and receives a block from at step k (1 .. p-1). The algorithm
 * (alltoall_pairwise.c) runs them, the plan (alltoall_plan.c) asks the controller to route them,
 * both from the same schedule. Below both, calling neither.
 *
 * Every step is a permutation of the ranks, and over the p - 1 steps every rank sends to every
 * other rank once. Two kinds:
 *
 * - shifts (any p, any layout): step k sends to q + d and receives from q - d (mod p), for the
 *   shifts d = 1, 2, .., p/2, p-1, p-2, .., p/2+1 in that order (sdnmpi_alltoall_shift). Steps k
 *   and p - k send in opposite directions between the same ranks; this order keeps them about p/2
 *   steps apart, so two steps in flight together never use one connection both ways, except at
 *   d = p/2 (p even), where every pair swaps blocks.
 *
 * - leaf grid (SDN_MPI_ALLTOALL_GRID=1; the ranks leaf by leaf, L >= 2 leaves of m >= 2 ranks
 *   each; rank g m + j is lane j of leaf g): a cross step (s, t), s = 1 .. L-1, t = 0 .. m-1,
 *   sends (g, j) to leaf g + s, lane j + t, so all of a leaf's m ranks send across its uplinks at
 *   once, to one other leaf; the m - 1 intra steps (0, t) stay inside the leaves and are spread
 *   between the cross steps, so that with two steps in flight they ride along a cross step's host
 *   links instead of leaving the uplinks idle. For s = L/2 (L even) a plain step would swap
 *   (leaves g and g + L/2 send to each other's same lanes): there the upper half of the leaves
 *   sends to lane j + 1 - t instead, which keeps every pair one-way (the union over t still
 *   reaches every lane). Then no cross step swaps; an intra step swaps only at t = m/2 (m even),
 *   on host links alone. The order avoids, where it can, two consecutive steps that use one
 *   connection both ways. Why: the shifts' swap step at d = p/2 runs at about half the link rate
 *   under Open MPI's TCP transport (libsdnmpi/README.md, SDN_MPI_Alltoall), and on leaf-ordered
 *   ranks the shifts d = 1 and p - 1 mix intra-leaf and cross-leaf blocks, leaving half of each
 *   leaf's uplinks idle in those steps.
 */
#ifndef SDNMPI_ALLTOALL_SCHED_H
#define SDNMPI_ALLTOALL_SCHED_H

/* The most steps a leaf grid schedule holds (more ranks: shifts). */
#define SDNMPI_ALLTOALL_GRID_MAX_STEPS 128

struct sdnmpi_alltoall_sched {
    int p;
    int leaves, lanes; /* the grid's L and m; 0 and 0 for shifts */
    /* grid: step k's leaf shift s and lane shift t, k = 1 .. p-1 (entry k - 1) */
    unsigned char s[SDNMPI_ALLTOALL_GRID_MAX_STEPS], t[SDNMPI_ALLTOALL_GRID_MAX_STEPS];
};

/* The schedule of p ranks laid out leaf by leaf (leaf g holds ranks leaf_start[g] ..
 * leaf_start[g+1] - 1, nleaves + 1 entries; NULL or nleaves < 2: unknown layout): the leaf grid
 * when every leaf holds the same m >= 2 ranks, p - 1 <= SDNMPI_ALLTOALL_GRID_MAX_STEPS and
 * `grid` is set, else shifts. The same inputs give the same schedule on every rank. */
void sdnmpi_alltoall_sched_init(struct sdnmpi_alltoall_sched *sc, int p, const int *leaf_start,
                                int nleaves, int grid);

/* Whom rank q sends to (*to) and receives from (*from) at step k (1 .. p-1). */
void sdnmpi_alltoall_sched_peer(const struct sdnmpi_alltoall_sched *sc, int q, int k, int *to,
                                int *from);

/* The shift of step k (1 .. p-1) of the shift schedule: 1, 2, .., p/2, then p-1, p-2, ..,
 * p/2+1. */
int sdnmpi_alltoall_shift(int k, int p);

#endif
