/* hier_layout.h -- the step geometry of the hierarchical allreduce (allreduce_hier.c) on any
 * leaf layout, and the cross-leaf rank pairs it uses (plan.c asks the controller to route them).
 *
 * The ranks sit leaf by leaf: leaf g holds ranks start[g] .. start[g+1]-1 (k_g >= 1 ranks, the
 * plan orders them so), L >= 2 leaves. With m = min k_g "lanes" per leaf, P the largest power of
 * two <= L and F = max ceil(k_g / m) - 1, each segment of the vector takes these steps:
 *   F fold steps: rank j >= m of a leaf hands its whole segment to lane j mod m (step j / m);
 *   m-1 ring steps, reduce-scatter among the leaf's m lanes (lane j ends with chunk j's sum);
 *   1 fold step if L > P: lane j of leaf P+e hands chunk j to lane j of leaf e;
 *   log2 P halving steps among the first P leaves' lane j (partner leaf g ^ d, d = 1, 2, ...);
 *   log2 P doubling steps (the allgather, reverse order), the unfold across leaves, the ring
 *   allgather, and the F unfold steps, each the mirror of its reduce-side step.
 * Equal leaves and L a power of two: F = 0 and no cross-leaf fold, i.e. the plain algorithm. Every
 * element is reduced on one rank in a fixed order and then only copied. A rank with nothing to do
 * in a step gets MPI_PROC_NULL peers and empty ranges, so every rank has the same steps. */
#ifndef SDNMPI_HIER_LAYOUT_H
#define SDNMPI_HIER_LAYOUT_H

#include <mpi.h>

struct sdnmpi_hier_layout {
    const int *start;  /* nleaves + 1 offsets, start[nleaves] = p */
    int nleaves, p;
    int m;             /* lanes per leaf (the smallest leaf) */
    int folds;         /* F */
    int pof2, ldims;   /* P and log2 P */
    int nsteps;        /* per segment */
};

struct sdnmpi_hier_step {
    int send_to, recv_from; /* ranks, or MPI_PROC_NULL */
    int send_off, send_n;   /* elements of the whole vector */
    int recv_off, recv_n;
    int reduce;             /* received data is reduced into the vector (else copied) */
};

/* Fills *h for nleaves leaves at start[] (p = start[nleaves]); 1 if the algorithm can run there
 * (nleaves >= 2, every leaf non-empty, start increasing from 0), else 0. */
int sdnmpi_hier_layout_init(struct sdnmpi_hier_layout *h, const int *start, int nleaves);

/* Step i (0 .. nsteps-1) of `rank` for the segment of segn elements starting at element seg0. */
void sdnmpi_hier_step(const struct sdnmpi_hier_layout *h, int rank, int seg0, int segn, int i,
                      struct sdnmpi_hier_step *st);

/* The leaf of `rank`. */
int sdnmpi_hier_leaf(const struct sdnmpi_hier_layout *h, int rank);

/* The cross-leaf steps, as a schedule for the plan request (schedule.h): group 0 is the fold of
 * the leaves beyond P (both directions: the fold and the unfold), if any, then one group per
 * halving level (its pairs exchange both ways; the allgather reuses them). Number of groups, and
 * the directed rank pairs of group q (at most 2p). */
int sdnmpi_hier_cross_groups(const struct sdnmpi_hier_layout *h);
int sdnmpi_hier_cross_pairs(const struct sdnmpi_hier_layout *h, int q, int *src, int *dst);

/* 1 unless the cross-leaf pairs are recursive doubling's (equal leaves of a power-of-two size, a
 * power-of-two number of them: leaf distance d is rank distance d x k), whose routes the plan
 * already has. */
int sdnmpi_hier_routes_needed(const struct sdnmpi_hier_layout *h);

#endif
