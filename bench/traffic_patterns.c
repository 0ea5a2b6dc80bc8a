/* traffic_patterns.c -- synthetic point-to-point MPI patterns for traffic-aware job routing
 * (issue 15). A plain MPI program: nothing of sdnmpi in it, so it runs unmodified under the
 * profiler and under the preload library.
 *
 * Usage: traffic_patterns PATTERN BYTES ITERS [ARG]
 *
 *   shift K      rank r sends BYTES to r+K (mod p) and receives from r-K (K = ARG, default 1)
 *   perm SEED    a random permutation of the ranks (the same on every rank, from SEED = ARG,
 *                default 1): rank r sends to perm[r] (a rank mapped to itself sends nothing)
 *   halo2d       periodic 2-D grid (MPI_Dims_create): BYTES to each of the 4 neighbours
 *   halo3d       periodic 3-D grid: BYTES to each of the 6 neighbours
 *   alltoall     MPI_Alltoall of BYTES per pair (a transpose)
 *
 * The ITERS rounds run inside MPI_Pcontrol(1) ... MPI_Pcontrol(0) (phase 1 for the profiler and
 * the controller). Every received byte is checked. Rank 0 prints one line:
 *   pattern=NAME bytes=B iters=N ranks=P seconds=T
 * with T the slowest rank's time for the ITERS rounds. Exit 1 on wrong data, 2 on bad arguments.
 */
#include <mpi.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PEERS 6
#define MAX_BYTES (1L << 30)

static int failed;

static unsigned char fill(int src, int dst, int iter)
{
    return (unsigned char)(src * 131 + dst * 31 + iter * 7 + 1);
}

static void usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr, "traffic_patterns: %s (usage: traffic_patterns shift|perm|halo2d|halo3d|alltoall "
                        "BYTES ITERS [ARG])\n", why);
    MPI_Finalize();
    exit(2);
}

static int parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* The permutation of 0..p-1 every rank derives from `seed` (Fisher-Yates over a 64-bit LCG). */
static int permuted(int p, long seed, int r, int inverse)
{
    int *perm = malloc(sizeof(int) * (size_t)p);
    if (perm == NULL)
        return -1;
    for (int i = 0; i < p; i++)
        perm[i] = i;
    uint64_t state = (uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int i = p - 1; i > 0; i--) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((state >> 33) % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    int out = -1;
    for (int i = 0; i < p; i++) {
        if (!inverse && i == r)
            out = perm[i];
        if (inverse && perm[i] == r)
            out = i;
    }
    free(perm);
    return out;
}

/* Send and receive peers of this rank: to[k] gets BYTES, from[k] sends them (same count). */
static int peers(const char *pattern, long arg, int r, int p, int *to, int *from)
{
    if (strcmp(pattern, "shift") == 0) {
        int k = (int)(arg % p);
        to[0] = (r + k) % p;
        from[0] = (r - k + p) % p;
        return to[0] == r ? 0 : 1;
    }
    if (strcmp(pattern, "perm") == 0) {
        to[0] = permuted(p, arg, r, 0);
        from[0] = permuted(p, arg, r, 1);
        if (to[0] < 0 || from[0] < 0)
            return -1;
        /* A fixed point sends nothing; its sender (itself) receives nothing either. */
        if (to[0] == r)
            return 0;
        return 1;
    }
    int ndims = strcmp(pattern, "halo2d") == 0 ? 2 : strcmp(pattern, "halo3d") == 0 ? 3 : 0;
    if (ndims == 0)
        return -1;
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Dims_create(p, ndims, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, r, ndims, coords);
    int n = 0;
    for (int d = 0; d < ndims; d++) {
        int lo, hi;
        MPI_Cart_shift(cart, d, 1, &lo, &hi);
        to[n] = hi, from[n] = lo, n++;      /* to the next along d, from the previous */
        to[n] = lo, from[n] = hi, n++;
    }
    MPI_Comm_free(&cart);
    return n;
}

static void check(const unsigned char *buf, long bytes, unsigned char want, const char *what)
{
    for (long i = 0; i < bytes; i++) {
        if (buf[i] != want) {
            fprintf(stderr, "traffic_patterns: wrong data %s at byte %ld\n", what, i);
            failed = 1;
            return;
        }
    }
}

static double run_peers(int n, const int *to, const int *from, long bytes, long iters, int r)
{
    unsigned char *out = malloc((size_t)bytes * MAX_PEERS + 1), *in = malloc((size_t)bytes * MAX_PEERS + 1);
    if (out == NULL || in == NULL) {
        fprintf(stderr, "traffic_patterns: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Request reqs[2 * MAX_PEERS];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        for (int k = 0; k < n; k++) {
            MPI_Irecv(in + k * bytes, (int)bytes, MPI_BYTE, from[k], k, MPI_COMM_WORLD, &reqs[k]);
            memset(out + k * bytes, fill(r, to[k], (int)it), (size_t)bytes);
            MPI_Isend(out + k * bytes, (int)bytes, MPI_BYTE, to[k], k, MPI_COMM_WORLD, &reqs[n + k]);
        }
        MPI_Waitall(2 * n, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < n; k++)
            check(in + k * bytes, bytes, fill(from[k], r, (int)it), "from a neighbour");
    }
    double t = MPI_Wtime() - t0;
    free(out);
    free(in);
    return t;
}

static double run_alltoall(long bytes, long iters, int r, int p)
{
    unsigned char *out = malloc((size_t)bytes * (size_t)p + 1), *in = malloc((size_t)bytes * (size_t)p + 1);
    if (out == NULL || in == NULL) {
        fprintf(stderr, "traffic_patterns: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long it = 0; it < iters; it++) {
        for (int j = 0; j < p; j++)
            memset(out + (size_t)j * bytes, fill(r, j, (int)it), (size_t)bytes);
        MPI_Alltoall(out, (int)bytes, MPI_BYTE, in, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (int j = 0; j < p; j++)
            check(in + (size_t)j * bytes, bytes, fill(j, r, (int)it), "in the all-to-all");
    }
    double t = MPI_Wtime() - t0;
    free(out);
    free(in);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long bytes, iters, arg = 1;
    if (argc < 4 || argc > 5)
        usage(r, "wrong number of arguments");
    if (parse_long(argv[2], 1, MAX_BYTES / (p > MAX_PEERS ? p : MAX_PEERS), &bytes) != 0)
        usage(r, "BYTES must be a positive number (at most 1 GiB in all)");
    if (parse_long(argv[3], 1, 1000000, &iters) != 0)
        usage(r, "ITERS must be 1 .. 1000000");
    if (argc == 5 && parse_long(argv[4], 0, 1L << 30, &arg) != 0)
        usage(r, "ARG must be a number >= 0");
    const char *pattern = argv[1];
    double t;
    MPI_Pcontrol(1);
    if (strcmp(pattern, "alltoall") == 0) {
        t = run_alltoall(bytes, iters, r, p);
    } else {
        int to[MAX_PEERS], from[MAX_PEERS];
        int n = peers(pattern, arg, r, p, to, from);
        if (n < 0)
            usage(r, "unknown pattern");
        t = run_peers(n, to, from, bytes, iters, r);
    }
    MPI_Pcontrol(0);
    double slowest;
    int bad;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&failed, &bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r == 0)
        printf("pattern=%s bytes=%ld iters=%ld ranks=%d seconds=%.6f\n", pattern, bytes, iters, p, slowest);
    MPI_Finalize();
    return r == 0 ? bad : failed;
}
