/* traffic_patterns.c -- communication patterns for traffic-aware job routing (issue 15): the
 * library tests (tests/unit/test_libsdnmpi_traffic.py) profile them and send the traces, the
 * pattern tests (tests/unit/test_traffic_patterns.py) check every pattern, the benchmarks rerun
 * them under each routing policy. A plain MPI program: nothing of sdnmpi is linked in, so it runs
 * unmodified under the profiler and under the preload library.
 *
 * Usage: traffic_patterns [--reps N] [--window W] [--hints] [--wait-sleep US] [--hold-max S] STEP [ARGS] [STEP [ARGS] ...]
 *
 *   shift D B      rank r sends B bytes to r+D (mod p), receives from r-D
 *   perm SEED B    a random permutation (the same on every rank, from SEED): r sends B bytes to
 *                  perm[r]; fixed points send nothing
 *   halo2d B       a periodic 2-D grid (MPI_Dims_create, MPI_Cart_shift): B bytes to each distinct
 *                  neighbour other than the rank itself (at most 4)
 *   halo3d B       the same on a periodic 3-D grid (at most 6 neighbours)
 *   alltoall B     B bytes from every rank to every other rank (Isend/Irecv, a transpose)
 *   phase K        MPI_Pcontrol(K) (K = 0 leaves the phase)
 *   pause MS       computes (spins) for MS milliseconds, no communication
 *   skew MS        rank 0 alone computes for MS milliseconds of its own CPU time (the others go on
 *                  and wait for it in the next exchange's barrier): a load imbalance, the same work
 *                  however busy the machine (on a busy one it takes longer, as real work would)
 *   hold FILE      every rank sleeps until FILE exists (checked every HOLD_POLL_MS, for at most
 *                  --hold-max seconds, default 600; past that the run fails), no communication: a
 *                  test looks at the switches while the job still holds its routes, then creates FILE
 *
 * --window W (default 1): in each repetition the B bytes to a peer go as W messages of about B/W
 * bytes (the last takes the rest), all W posted at once (W Irecv per source, then W Isend per
 * destination, one Waitall), as a code that keeps several messages in flight to a peer does; W = 1
 * is one message per peer. Every message above the transport's eager limit starts with a
 * rendezvous handshake; with W > 1 the other messages' first fragments keep the link busy while
 * a handshake waits for its answer.
 * Each exchange is repeated --reps times (default 1); every byte of every repetition is checked
 * (the data depend on sender, receiver, repetition and offset). --hints: before each exchange,
 * each rank declares its sends (B * reps bytes per destination) with SDN_MPI_Flow_hints, looked up
 * with dlsym, so only when the sdnmpi preload library is loaded; otherwise the option does nothing.
 * --wait-sleep US (default 0: off): every wait of the exchanges (the barrier before each
 * repetition, the repetition's sends and receives, the reduce of the times) becomes its
 * nonblocking form (MPI_Ibarrier, MPI_Ireduce) completed by MPI_Testall with a US-microsecond
 * nanosleep between tests, instead of MPI_Barrier/MPI_Waitall/MPI_Reduce, in which Open MPI spins
 * (even with mpi_yield_when_idle). A waiting rank then leaves its core to others: what ranks with
 * cores of their own look like on a cluster, where more ranks than cores (an emulation on one
 * machine) would otherwise take the CPU that the emulated hosts' TCP and switches need.
 *
 * Output (rank 0, stdout), one line per exchange, then one line at the end if every byte was right:
 *   traffic_patterns: pattern=NAME bytes=B reps=N ranks=P seconds=T
 *   traffic_patterns: ranks=P ok seconds=S cpu_min=C0 cpu_max=C1
 * T: the slowest rank's communication time for the exchange's N repetitions (filling and checking
 * the buffers excluded); S: the sum of the T's (pauses excluded); C0, C1: the least and the most
 * CPU seconds (user + system, getrusage) a rank used from MPI_Init's return to the end.
 * Exit 1 on wrong data, 2 (one line on stderr, nothing run) on bad arguments.
 */
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_BYTES (1L << 30)
#define MAX_NEIGHBOURS 6
#define MAX_WINDOW 1024
#define HOLD_POLL_MS 20

typedef int (*hints_fn)(MPI_Comm, int, const int *, const long long *);

static int rank, size, reps = 1, window = 1, failed;
static long wait_sleep_us; /* --wait-sleep: 0 = the blocking calls */
static long hold_max_s = 600;
static hints_fn hints;
static double total_seconds;

/* One step of the command line: its name and up to two numbers, or a path. */
struct step {
    const char *name, *path;
    long a, b;
};

static void bad_arguments(const char *fmt, const char *what)
{
    if (rank == 0) {
        fprintf(stderr, "traffic_patterns: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, " (usage: traffic_patterns [--reps N] [--window W] [--hints] [--wait-sleep US] [--hold-max S] shift D B | perm SEED B | "
                        "halo2d B | halo3d B | alltoall B | phase K | pause MS | skew MS | hold FILE ...)\n");
    }
    MPI_Finalize();
    exit(2);
}

static long number(int argc, char **argv, int i, long lo, long hi)
{
    if (i >= argc)
        bad_arguments("%s needs an argument", argv[i - 1]);
    char *end;
    errno = 0;
    long v = strtol(argv[i], &end, 10);
    if (errno != 0 || end == argv[i] || *end != '\0' || v < lo || v > hi)
        bad_arguments("bad number %s", argv[i]);
    return v;
}

static unsigned char byte_of(int src, int dst, int rep, long i)
{
    return (unsigned char)(src * 131 + dst * 31 + rep * 17 + i * 7);
}

static void *alloc(size_t n)
{
    void *p = malloc(n + 1);
    if (p == NULL) {
        fprintf(stderr, "traffic_patterns[%d]: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void send_hints(const int *dst, int nd, long bytes)
{
    long long *b = alloc((size_t)nd * sizeof *b);
    for (int i = 0; i < nd; i++)
        b[i] = (long long)bytes * reps;
    if (hints(MPI_COMM_WORLD, nd, dst, b) != MPI_SUCCESS)
        fprintf(stderr, "traffic_patterns[%d]: SDN_MPI_Flow_hints failed\n", rank);
    free(b);
}

/* Completes req[0..n): MPI_Waitall, or with --wait-sleep MPI_Testall and a nanosleep between. */
static void wait_all(int n, MPI_Request *req)
{
    if (wait_sleep_us == 0) {
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    struct timespec nap = {wait_sleep_us / 1000000, (wait_sleep_us % 1000000) * 1000};
    int done = 0;
    MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    while (!done) {
        nanosleep(&nap, NULL);
        MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
    }
}

static void barrier(void)
{
    if (wait_sleep_us == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    wait_all(1, &req);
}

static void reduce_max(double *in, double *out)
{
    if (wait_sleep_us == 0) {
        MPI_Reduce(in, out, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        return;
    }
    MPI_Request req;
    MPI_Ireduce(in, out, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &req);
    wait_all(1, &req);
}

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One exchange: this rank sends bytes to dst[0..nd) and receives bytes from src[0..ns). */
static void exchange(const char *name, const int *dst, int nd, const int *src, int ns, long bytes)
{
    if (hints != NULL && nd > 0)
        send_hints(dst, nd, bytes);
    unsigned char *out = alloc((size_t)nd * (size_t)bytes), *in = alloc((size_t)ns * (size_t)bytes);
    MPI_Request *req = alloc(((size_t)nd + (size_t)ns) * (size_t)window * sizeof *req);
    long piece = (bytes + window - 1) / window; /* the window's messages: piece bytes, the last the rest */
    double seconds = 0;
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < nd; i++)
            for (long k = 0; k < bytes; k++)
                out[i * bytes + k] = byte_of(rank, dst[i], r, k);
        memset(in, 0, (size_t)ns * (size_t)bytes);
        barrier();
        double t0 = MPI_Wtime();
        int n = 0;
        for (int i = 0; i < ns; i++)
            for (long at = 0; at < bytes; at += piece)
                MPI_Irecv(in + i * bytes + at, (int)(bytes - at < piece ? bytes - at : piece), MPI_BYTE, src[i], 5,
                          MPI_COMM_WORLD, &req[n++]);
        for (int i = 0; i < nd; i++)
            for (long at = 0; at < bytes; at += piece)
                MPI_Isend(out + i * bytes + at, (int)(bytes - at < piece ? bytes - at : piece), MPI_BYTE, dst[i], 5,
                          MPI_COMM_WORLD, &req[n++]);
        wait_all(n, req);
        seconds += MPI_Wtime() - t0;
        for (int i = 0; i < ns; i++)
            for (long k = 0; k < bytes; k++)
                if (in[i * bytes + k] != byte_of(src[i], rank, r, k)) {
                    fprintf(stderr, "traffic_patterns[%d]: %s: wrong byte %ld from %d\n", rank, name, k, src[i]);
                    failed = 1;
                    break;
                }
    }
    free(out);
    free(in);
    free(req);
    double slowest = 0;
    reduce_max(&seconds, &slowest);
    if (rank == 0) {
        printf("traffic_patterns: pattern=%s bytes=%ld reps=%d ranks=%d seconds=%.6f\n", name, bytes, reps, size,
               slowest);
        total_seconds += slowest;
    }
}

static void shift(long d, long bytes)
{
    d = ((d % size) + size) % size;
    int to = (int)((rank + d) % size), from = (int)((rank - d + size) % size);
    exchange("shift", &to, d ? 1 : 0, &from, d ? 1 : 0, bytes);
}

static void perm(long seed, long bytes)
{
    int *p = alloc((size_t)size * sizeof *p);
    for (int i = 0; i < size; i++)
        p[i] = i;
    uint64_t x = (uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int i = size - 1; i > 0; i--) { /* Fisher-Yates with a 64-bit LCG */
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((x >> 33) % (uint64_t)(i + 1));
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
    int to = p[rank], from = -1;
    for (int i = 0; i < size; i++)
        if (p[i] == rank)
            from = i;
    free(p);
    exchange("perm", &to, to != rank, &from, from != rank, bytes);
}

/* Periodic grid of ndims dimensions: the neighbour relation is symmetric, so the same distinct
 * neighbours (this rank left out) are both the destinations and the sources. */
static void halo(int ndims, long bytes)
{
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, nb[MAX_NEIGHBOURS], n = 0;
    MPI_Comm cart;
    MPI_Dims_create(size, ndims, dims);
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    for (int d = 0; d < ndims; d++) {
        int cand[2];
        MPI_Cart_shift(cart, d, 1, &cand[0], &cand[1]);
        for (int c = 0; c < 2; c++) {
            int dup = cand[c] == rank;
            for (int j = 0; j < n; j++)
                dup |= nb[j] == cand[c];
            if (!dup)
                nb[n++] = cand[c];
        }
    }
    MPI_Comm_free(&cart);
    exchange(ndims == 2 ? "halo2d" : "halo3d", nb, n, nb, n, bytes);
}

static void alltoall(long bytes)
{
    int *peers = alloc((size_t)size * sizeof *peers), n = 0;
    for (int i = 0; i < size; i++)
        if (i != rank)
            peers[n++] = i;
    exchange("alltoall", peers, n, peers, n, bytes);
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

/* Spins until this thread has used ms milliseconds of CPU time (skew: a fixed amount of work). */
static void compute_ms(long ms)
{
    struct timespec t0, t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0) != 0) {
        pause_ms(ms); /* no thread clock (not on Linux): wall time instead */
        return;
    }
    do
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
            return;
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* Sleeps until path exists, at most hold_max_s; a run whose file never came fails. */
static void hold(const char *path)
{
    const struct timespec nap = {0, HOLD_POLL_MS * 1000000L};
    long waited_ms = 0;
    while (access(path, F_OK) != 0) {
        if (waited_ms >= hold_max_s * 1000L) {
            fprintf(stderr, "traffic_patterns[%d]: hold: %s did not appear in %ld s\n", rank, path, hold_max_s);
            failed = 1;
            return;
        }
        nanosleep(&nap, NULL);
        waited_ms += HOLD_POLL_MS;
    }
}

/* Parses argv[i..] into steps (all of them before anything runs); returns their count. */
static int parse(int argc, char **argv, int i, struct step *steps)
{
    int n = 0;
    for (; i < argc; i++) {
        struct step *s = &steps[n++];
        s->name = argv[i];
        if (!strcmp(s->name, "shift") || !strcmp(s->name, "perm")) {
            s->a = number(argc, argv, ++i, -MAX_BYTES, MAX_BYTES);
            s->b = number(argc, argv, ++i, 1, MAX_BYTES);
        } else if (!strcmp(s->name, "halo2d") || !strcmp(s->name, "halo3d") || !strcmp(s->name, "alltoall")) {
            s->b = number(argc, argv, ++i, 1, MAX_BYTES);
        } else if (!strcmp(s->name, "phase")) {
            s->a = number(argc, argv, ++i, 0, 1000000);
        } else if (!strcmp(s->name, "pause") || !strcmp(s->name, "skew")) {
            s->a = number(argc, argv, ++i, 0, 3600000);
        } else if (!strcmp(s->name, "hold")) {
            if (++i >= argc)
                bad_arguments("%s needs an argument", "hold");
            s->path = argv[i];
        } else {
            bad_arguments("unknown pattern %s", s->name);
        }
    }
    if (n == 0)
        bad_arguments("%s", "no pattern given");
    return n;
}

static void run(const struct step *s)
{
    if (!strcmp(s->name, "shift"))
        shift(s->a, s->b);
    else if (!strcmp(s->name, "perm"))
        perm(s->a, s->b);
    else if (!strcmp(s->name, "halo2d"))
        halo(2, s->b);
    else if (!strcmp(s->name, "halo3d"))
        halo(3, s->b);
    else if (!strcmp(s->name, "alltoall"))
        alltoall(s->b);
    else if (!strcmp(s->name, "phase"))
        MPI_Pcontrol((int)s->a);
    else if (!strcmp(s->name, "skew")) {
        if (rank == 0)
            compute_ms(s->a);
    } else if (!strcmp(s->name, "hold"))
        hold(s->path);
    else
        pause_ms(s->a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double cpu0 = cpu_seconds();
    int i = 1;
    for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--reps"))
            reps = (int)number(argc, argv, ++i, 1, 1000000);
        else if (!strcmp(argv[i], "--window"))
            window = (int)number(argc, argv, ++i, 1, MAX_WINDOW);
        else if (!strcmp(argv[i], "--wait-sleep"))
            wait_sleep_us = number(argc, argv, ++i, 0, 1000000);
        else if (!strcmp(argv[i], "--hold-max"))
            hold_max_s = number(argc, argv, ++i, 0, 86400);
        else if (!strcmp(argv[i], "--hints"))
            *(void **)&hints = dlsym(RTLD_DEFAULT, "SDN_MPI_Flow_hints");
        else
            bad_arguments("unknown option %s", argv[i]);
    }
    struct step *steps = alloc((size_t)argc * sizeof *steps);
    int n = parse(argc, argv, i, steps);
    for (int k = 0; k < n; k++)
        run(&steps[k]);
    free(steps);
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double cpu = cpu_seconds() - cpu0, cpu_min = 0, cpu_max = 0;
    MPI_Reduce(&cpu, &cpu_min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("traffic_patterns: ranks=%d ok seconds=%.6f cpu_min=%.3f cpu_max=%.3f\n", size, total_seconds,
               cpu_min, cpu_max);
    MPI_Finalize();
    return any ? 1 : 0;
}
