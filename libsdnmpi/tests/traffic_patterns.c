/* traffic_patterns.c -- communication patterns for traffic-aware job routing (issue 15): the
 * tests (tests/unit/test_libsdnmpi_traffic.py) profile them and send the traces, the benchmarks
 * rerun them under each routing policy. A plain MPI program: nothing of sdnmpi is linked in.
 *
 * Usage: traffic_patterns [--reps N] [--hints] PATTERN [ARGS] [PATTERN [ARGS] ...]
 *
 *   shift D B      rank r sends B bytes to r+D (mod p), receives from r-D
 *   perm SEED B    a random permutation (the same on every rank, from SEED): r sends B bytes to
 *                  perm[r]; fixed points send nothing
 *   halo2d B       a periodic 2-D grid (MPI_Dims_create): B bytes to each of the 4 neighbours
 *   alltoall B     B bytes from every rank to every other rank (Isend/Irecv)
 *   phase K        MPI_Pcontrol(K) (K = 0 leaves the phase)
 *   pause MS       computes (spins) for MS milliseconds, no communication
 *
 * Each exchange is repeated --reps times (default 1). --hints: before each exchange, each rank
 * declares its sends with SDN_MPI_Flow_hints (looked up with dlsym, so only when the sdnmpi
 * preload library is loaded; otherwise the option does nothing). Every byte received is checked;
 * rank 0 prints "traffic_patterns: p=P ok seconds=S" (S: the exchanges' time, pauses excluded) or
 * the program exits 1.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*hints_fn)(MPI_Comm, int, const int *, const long long *);

static int rank, size, reps = 1, failed;
static hints_fn hints;
static double exchange_seconds;

static unsigned char byte_of(int src, int dst, long i)
{
    return (unsigned char)(src * 131 + dst * 31 + i * 7);
}

/* One exchange: this rank sends bytes to dst[0..nd) and receives bytes from src[0..ns). */
static void exchange(const int *dst, int nd, const int *src, int ns, long bytes)
{
    if (hints != NULL && nd > 0) {
        long long *b = malloc((size_t)nd * sizeof *b);
        if (b == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < nd; i++)
            b[i] = (long long)bytes * reps;
        if (hints(MPI_COMM_WORLD, nd, dst, b) != MPI_SUCCESS)
            fprintf(stderr, "traffic_patterns[%d]: SDN_MPI_Flow_hints failed\n", rank);
        free(b);
    }
    unsigned char **out = calloc((size_t)nd + 1, sizeof *out), **in = calloc((size_t)ns + 1, sizeof *in);
    MPI_Request *req = malloc(((size_t)nd + (size_t)ns + 1) * sizeof *req);
    if (out == NULL || in == NULL || req == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < nd; i++) {
        if ((out[i] = malloc((size_t)bytes + 1)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (long k = 0; k < bytes; k++)
            out[i][k] = byte_of(rank, dst[i], k);
    }
    for (int i = 0; i < ns; i++)
        if ((in[i] = malloc((size_t)bytes + 1)) == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        int n = 0;
        for (int i = 0; i < ns; i++)
            MPI_Irecv(in[i], (int)bytes, MPI_BYTE, src[i], 5, MPI_COMM_WORLD, &req[n++]);
        for (int i = 0; i < nd; i++)
            MPI_Isend(out[i], (int)bytes, MPI_BYTE, dst[i], 5, MPI_COMM_WORLD, &req[n++]);
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    exchange_seconds += MPI_Wtime() - t0;
    for (int i = 0; i < ns; i++)
        for (long k = 0; k < bytes; k++)
            if (in[i][k] != byte_of(src[i], rank, k)) {
                fprintf(stderr, "traffic_patterns[%d]: wrong byte %ld from %d\n", rank, k, src[i]);
                failed = 1;
                break;
            }
    for (int i = 0; i < nd; i++)
        free(out[i]);
    for (int i = 0; i < ns; i++)
        free(in[i]);
    free(out);
    free(in);
    free(req);
}

static void shift(int d, long bytes)
{
    d = ((d % size) + size) % size;
    int to = (rank + d) % size, from = (rank - d + size) % size;
    exchange(&to, d ? 1 : 0, &from, d ? 1 : 0, bytes);
}

static void perm(unsigned seed, long bytes)
{
    int *p = malloc((size_t)size * sizeof *p);
    if (p == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < size; i++)
        p[i] = i;
    unsigned long long x = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (int i = size - 1; i > 0; i--) { /* Fisher-Yates with a 64-bit LCG */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int j = (int)((x >> 33) % (unsigned long long)(i + 1));
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    int to = p[rank], from = -1;
    for (int i = 0; i < size; i++)
        if (p[i] == rank)
            from = i;
    free(p);
    exchange(&to, to != rank, &from, from != rank, bytes);
}

static void halo2d(long bytes)
{
    int dims[2] = {0, 0}, nb[4], n = 0;
    MPI_Dims_create(size, 2, dims);
    int x = rank % dims[0], y = rank / dims[0];
    int cand[4] = {((x + 1) % dims[0]) + y * dims[0], ((x - 1 + dims[0]) % dims[0]) + y * dims[0],
                   x + ((y + 1) % dims[1]) * dims[0], x + ((y - 1 + dims[1]) % dims[1]) * dims[0]};
    for (int i = 0; i < 4; i++) { /* distinct neighbours other than this rank */
        int dup = cand[i] == rank;
        for (int j = 0; j < n; j++)
            dup |= nb[j] == cand[i];
        if (!dup)
            nb[n++] = cand[i];
    }
    exchange(nb, n, nb, n, bytes); /* the neighbour relation is symmetric */
}

static void alltoall(long bytes)
{
    int *peers = malloc((size_t)size * sizeof *peers), n = 0;
    if (peers == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < size; i++)
        if (i != rank)
            peers[n++] = i;
    exchange(peers, n, peers, n, bytes);
    free(peers);
}

static void pause_ms(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static long num(int argc, char **argv, int i)
{
    if (i >= argc) {
        if (rank == 0)
            fprintf(stderr, "traffic_patterns: %s needs an argument\n", argv[i - 1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return strtol(argv[i], NULL, 10);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--reps"))
            reps = (int)num(argc, argv, ++i);
        else if (!strcmp(argv[i], "--hints"))
            *(void **)&hints = dlsym(RTLD_DEFAULT, "SDN_MPI_Flow_hints");
    }
    for (; i < argc; i++) {
        const char *p = argv[i];
        if (!strcmp(p, "shift")) {
            long d = num(argc, argv, i + 1), b = num(argc, argv, i + 2);
            i += 2;
            shift((int)d, b);
        } else if (!strcmp(p, "perm")) {
            long s = num(argc, argv, i + 1), b = num(argc, argv, i + 2);
            i += 2;
            perm((unsigned)s, b);
        } else if (!strcmp(p, "halo2d")) {
            halo2d(num(argc, argv, ++i));
        } else if (!strcmp(p, "alltoall")) {
            alltoall(num(argc, argv, ++i));
        } else if (!strcmp(p, "phase")) {
            MPI_Pcontrol((int)num(argc, argv, ++i));
        } else if (!strcmp(p, "pause")) {
            pause_ms(num(argc, argv, ++i));
        } else {
            if (rank == 0)
                fprintf(stderr, "traffic_patterns: unknown pattern %s\n", p);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("traffic_patterns: p=%d ok seconds=%.6f\n", size, exchange_seconds);
    MPI_Finalize();
    return any ? 1 : 0;
}
