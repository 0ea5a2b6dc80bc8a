/* hier_layout.c -- the hierarchical allreduce's steps on any leaf layout (hier_layout.h). */
#include "hier_layout.h"

/* First element of part b of n elements cut into nparts (sizes differ by at most one). */
static int part_start(int n, int nparts, int b)
{
    int q = n / nparts, r = n % nparts;
    return b * q + (b < r ? b : r);
}

int sdnmpi_hier_layout_init(struct sdnmpi_hier_layout *h, const int *start, int nleaves)
{
    if (start == NULL || nleaves < 2 || start[0] != 0)
        return 0;
    h->start = start;
    h->nleaves = nleaves;
    h->p = start[nleaves];
    h->m = h->p;
    int most = 0;
    for (int g = 0; g < nleaves; g++) {
        int k = start[g + 1] - start[g];
        if (k < 1)
            return 0;
        h->m = k < h->m ? k : h->m;
        most = k > most ? k : most;
    }
    h->folds = (most + h->m - 1) / h->m - 1;
    h->pof2 = 1;
    h->ldims = 0;
    while (h->pof2 * 2 <= nleaves) {
        h->pof2 *= 2;
        h->ldims++;
    }
    h->nsteps = 2 * h->folds + 2 * (h->m - 1) + 2 * (nleaves > h->pof2) + 2 * h->ldims;
    return 1;
}

int sdnmpi_hier_leaf(const struct sdnmpi_hier_layout *h, int rank)
{
    int lo = 0, hi = h->nleaves - 1;
    while (lo < hi) { /* the last leaf whose start is <= rank */
        int mid = (lo + hi + 1) / 2;
        if (h->start[mid] <= rank)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Block range [*lo, *hi) of the lane after `halvings` halvings (leaf distance 1, 2, ...). */
static void lane_range(const struct sdnmpi_hier_layout *h, int g, int halvings, int *lo, int *hi)
{
    *lo = 0;
    *hi = h->pof2;
    for (int t = 0; t < halvings; t++) {
        int mid = *lo + (*hi - *lo) / 2;
        if (g & (1 << t))
            *lo = mid;
        else
            *hi = mid;
    }
}

static void nothing(struct sdnmpi_hier_step *st)
{
    *st = (struct sdnmpi_hier_step){MPI_PROC_NULL, MPI_PROC_NULL, 0, 0, 0, 0, 0};
}

/* A one-way step: `rank` sends [off, off+n) to `to` (if not MPI_PROC_NULL) and receives the same
 * range from `from` (if not MPI_PROC_NULL). */
static void one_way(struct sdnmpi_hier_step *st, int to, int from, int off, int n, int reduce)
{
    *st = (struct sdnmpi_hier_step){to, from, off, to == MPI_PROC_NULL ? 0 : n, off,
                                    from == MPI_PROC_NULL ? 0 : n, reduce};
}

void sdnmpi_hier_step(const struct sdnmpi_hier_layout *h, int rank, int seg0, int segn, int i,
                      struct sdnmpi_hier_step *st)
{
    int g = sdnmpi_hier_leaf(h, rank), base = h->start[g], k = h->start[g + 1] - base;
    int j = rank - base, m = h->m, F = h->folds, fold_x = h->nleaves > h->pof2;
    int rs = i < h->nsteps / 2;
    int t = rs ? i : h->nsteps - 1 - i; /* the reduce-side step this one is or mirrors */
#define CHUNK0(c) (seg0 + part_start(segn, m, (c)))
#define CHUNKN(c) (part_start(segn, m, (c) + 1) - part_start(segn, m, (c)))
    nothing(st);
    if (t < F) { /* fold step f: rank j (f*m <= j < (f+1)*m) and lane j mod m */
        int f = t + 1, lane = j < m, partner = lane ? j + f * m : j - f * m;
        if ((lane && partner >= k) || (!lane && j / m != f))
            return;
        int to = lane == rs ? MPI_PROC_NULL : base + partner;
        int from = lane == rs ? base + partner : MPI_PROC_NULL;
        one_way(st, to, from, seg0, segn, rs);
        return;
    }
    if (j >= m)
        return; /* not a lane: nothing between its fold and unfold */
    t -= F;
    if (t < m - 1) { /* the ring inside the leaf */
        int send_c = rs ? (j - t - 1 + 2 * m) % m : (j - t + m) % m;
        int recv_c = rs ? (j - t - 2 + 2 * m) % m : (j - t - 1 + 2 * m) % m;
        if (!rs) { /* the allgather runs the ring forward again: its step r is mirror index t */
            int r = m - 2 - t;
            send_c = (j - r + m) % m;
            recv_c = (j - r - 1 + 2 * m) % m;
        }
        *st = (struct sdnmpi_hier_step){base + (j + 1) % m, base + (j - 1 + m) % m, CHUNK0(send_c),
                                        CHUNKN(send_c), CHUNK0(recv_c), CHUNKN(recv_c), rs};
        return;
    }
    t -= m - 1;
    int c0 = CHUNK0(j), cn = CHUNKN(j);
#undef CHUNK0
#undef CHUNKN
    if (fold_x && t == 0) { /* leaf P+e folds into leaf e (reduce side), back (allgather side) */
        int extra = g >= h->pof2, pg = extra ? g - h->pof2 : g + h->pof2;
        if (!extra && pg >= h->nleaves)
            return;
        int peer = h->start[pg] + j;
        int to = extra == rs ? peer : MPI_PROC_NULL, from = extra == rs ? MPI_PROC_NULL : peer;
        one_way(st, to, from, c0, cn, rs);
        return;
    }
    t -= fold_x;
    if (g >= h->pof2)
        return;
    /* reduce-scatter halving t (leaf distance 2^t) or, mirrored, the allgather's undoing of it */
    int d = 1 << t, lo, hi, plo, phi;
    lane_range(h, g, t + 1, &lo, &hi); /* mine after this halving */
    lane_range(h, g, t, &plo, &phi);   /* the range it split */
    int olo = lo == plo ? hi : plo, ohi = lo == plo ? phi : lo; /* the partner's half */
    int peer = h->start[g ^ d] + j;
    int send_lo = rs ? olo : lo, send_hi = rs ? ohi : hi;
    int recv_lo = rs ? lo : olo, recv_hi = rs ? hi : ohi;
    *st = (struct sdnmpi_hier_step){
        peer, peer,
        c0 + part_start(cn, h->pof2, send_lo),
        part_start(cn, h->pof2, send_hi) - part_start(cn, h->pof2, send_lo),
        c0 + part_start(cn, h->pof2, recv_lo),
        part_start(cn, h->pof2, recv_hi) - part_start(cn, h->pof2, recv_lo),
        rs};
}

int sdnmpi_hier_cross_groups(const struct sdnmpi_hier_layout *h)
{
    return (h->nleaves > h->pof2) + h->ldims;
}

int sdnmpi_hier_cross_pairs(const struct sdnmpi_hier_layout *h, int q, int *src, int *dst)
{
    int t = h->folds + h->m - 1 + q, n = 0; /* the reduce-side step of group q */
    for (int r = 0; r < h->p; r++) {
        struct sdnmpi_hier_step st, back;
        sdnmpi_hier_step(h, r, 0, 0, t, &st);
        sdnmpi_hier_step(h, r, 0, 0, h->nsteps - 1 - t, &back);
        int g = sdnmpi_hier_leaf(h, r);
        if (st.send_to != MPI_PROC_NULL && sdnmpi_hier_leaf(h, st.send_to) != g) {
            src[n] = r;
            dst[n++] = st.send_to;
        }
        /* a one-way step (a fold) goes back the other way on the allgather side */
        if (st.send_to != st.recv_from && back.send_to != MPI_PROC_NULL
            && sdnmpi_hier_leaf(h, back.send_to) != g) {
            src[n] = r;
            dst[n++] = back.send_to;
        }
    }
    return n;
}

int sdnmpi_hier_routes_needed(const struct sdnmpi_hier_layout *h)
{
    int k = h->m;
    return h->folds > 0 || h->nleaves != h->pof2 || (k & (k - 1)) != 0;
}
