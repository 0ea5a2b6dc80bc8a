/* alltoall_sched.c -- the pairwise exchange's steps: shifts or the leaf grid (alltoall_sched.h). */
#include "alltoall_sched.h"

#include <string.h>

int sdnmpi_alltoall_shift(int k, int p)
{
    return k <= p / 2 ? k : p + p / 2 - k;
}

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* Grid step (s, t): the destination of rank q, or (inverse) its source. */
static int grid_to(const struct sdnmpi_alltoall_sched *sc, int s, int t, int q)
{
    const int L = sc->leaves, m = sc->lanes, g = q / m, j = q % m;
    if (2 * s == L && g >= L / 2) /* the upper half of a halfway step: lane j + 1 - t */
        return (g - L / 2) * m + mod(j + 1 - t, m);
    return mod(g + s, L) * m + mod(j + t, m);
}

static int grid_from(const struct sdnmpi_alltoall_sched *sc, int s, int t, int q)
{
    const int L = sc->leaves, m = sc->lanes, g = q / m, j = q % m;
    if (2 * s == L && g < L / 2) /* sent by the upper half: lane k with k + 1 - t = j */
        return (g + L / 2) * m + mod(j + t - 1, m);
    return mod(g - s, L) * m + mod(j - t, m);
}

/* Whether steps a and b (grid shifts) use one connection both ways: q -> x in a, x -> q in b. */
static int reverse_of(const struct sdnmpi_alltoall_sched *sc, int sa, int ta, int sb, int tb)
{
    for (int q = 0; q < sc->p; q++)
        if (grid_to(sc, sb, tb, grid_to(sc, sa, ta, q)) == q)
            return 1;
    return 0;
}

/* Whether order[a] and order[b] (indices into sc's steps) use one connection both ways; an
 * index outside 0 .. n-1 conflicts with nothing. */
static int clash(const struct sdnmpi_alltoall_sched *sc, const int *order, int n, int a, int b)
{
    if (a < 0 || b < 0 || a >= n || b >= n)
        return 0;
    return reverse_of(sc, sc->s[order[a]], sc->t[order[a]], sc->s[order[b]], sc->t[order[b]]);
}

/* The grid's step order: cross steps by lane shift, then leaf shift, with the intra steps spread
 * evenly between them; then, greedily, each next step is the first remaining one that does not
 * reverse the step before it (if there is one); then each step that still reverses its
 * predecessor moves to the first place between two steps it reverses neither of. */
static void grid_order(struct sdnmpi_alltoall_sched *sc)
{
    const int L = sc->leaves, m = sc->lanes, cross = (L - 1) * m, intra = m - 1, n = cross + intra;
    int used[SDNMPI_ALLTOALL_GRID_MAX_STEPS] = {0}, order[SDNMPI_ALLTOALL_GRID_MAX_STEPS];
    int c = 0, i = 0;
    for (int k = 0; k < n; k++) /* the preference order, in sc->s/t for now */
        if (i < intra && (c >= cross || c >= (i + 1) * cross / (intra + 1))) {
            sc->s[k] = 0, sc->t[k] = (unsigned char)(i + 1), i++;
        } else {
            sc->s[k] = (unsigned char)(1 + c % (L - 1)), sc->t[k] = (unsigned char)(c / (L - 1));
            c++;
        }
    for (int k = 0; k < n; k++) {
        int pick = -1;
        for (int r = 0; r < n && pick < 0; r++) {
            order[k] = r;
            if (!used[r] && !clash(sc, order, n, k - 1, k))
                pick = r;
        }
        for (int r = 0; r < n && pick < 0; r++)
            if (!used[r])
                pick = r;
        used[pick] = 1;
        order[k] = pick;
    }
    for (int k = 1; k < n; k++) {
        if (!clash(sc, order, n, k - 1, k))
            continue;
        int step = order[k], rest[SDNMPI_ALLTOALL_GRID_MAX_STEPS];
        for (int r = 0, w = 0; r < n; r++)
            if (r != k)
                rest[w++] = order[r];
        if (clash(sc, rest, n - 1, k - 1, k)) /* its old neighbours would meet: leave it */
            continue;
        for (int at = 0; at < n; at++) { /* between rest[at - 1] and rest[at] */
            int trial[SDNMPI_ALLTOALL_GRID_MAX_STEPS];
            for (int r = 0; r < n; r++)
                trial[r] = r < at ? rest[r] : r == at ? step : rest[r - 1];
            if (!clash(sc, trial, n, at - 1, at) && !clash(sc, trial, n, at, at + 1)) {
                memcpy(order, trial, (size_t)n * sizeof *order);
                break;
            }
        }
    }
    unsigned char s[SDNMPI_ALLTOALL_GRID_MAX_STEPS], t[SDNMPI_ALLTOALL_GRID_MAX_STEPS];
    for (int k = 0; k < n; k++)
        s[k] = sc->s[order[k]], t[k] = sc->t[order[k]];
    memcpy(sc->s, s, (size_t)n);
    memcpy(sc->t, t, (size_t)n);
}

void sdnmpi_alltoall_sched_init(struct sdnmpi_alltoall_sched *sc, int p, const int *leaf_start,
                                int nleaves, int grid)
{
    memset(sc, 0, sizeof *sc);
    sc->p = p;
    if (!grid || leaf_start == NULL || nleaves < 2 || p - 1 > SDNMPI_ALLTOALL_GRID_MAX_STEPS
        || leaf_start[0] != 0 || leaf_start[nleaves] != p || p % nleaves != 0 || p / nleaves < 2)
        return;
    const int m = p / nleaves;
    for (int g = 0; g < nleaves; g++)
        if (leaf_start[g + 1] - leaf_start[g] != m)
            return;
    sc->leaves = nleaves;
    sc->lanes = m;
    grid_order(sc);
}

void sdnmpi_alltoall_sched_peer(const struct sdnmpi_alltoall_sched *sc, int q, int k, int *to,
                                int *from)
{
    const int p = sc->p;
    if (sc->leaves == 0) {
        int d = sdnmpi_alltoall_shift(k, p);
        *to = (q + d) % p;
        *from = (q - d + p) % p;
        return;
    }
    *to = grid_to(sc, sc->s[k - 1], sc->t[k - 1], q);
    *from = grid_from(sc, sc->s[k - 1], sc->t[k - 1], q);
}
