/* coll_bench_io.c -- the benchmark program's shared state, SDN_MPI_Init, output, route
 * switching (--toggle), timing and buffers (coll_bench.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sdnmpi.h>

#include "coll_bench.h"

const char *const impl_name[2] = {"openmpi", "sdnmpi"};

/* The program's shared state: its rank, the world's size, and the options (set by main). */
int my_rank, nprocs;
struct options opt = {
    .collective = "allreduce",
    .reps = 3,
    .tiny_reps = 20,
    .tiny_block = 10,
    .tiny_bytes = 8,
    .warmup_max = 262144,
    .toggle_timeout_s = 120.0,
};

/* SDN_MPI_Init, timed (slowest rank). */
void sdn_init(void)
{
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    int rc = SDN_MPI_Init();
    double t = MPI_Wtime() - t0;
    check_mpi(rc, "SDN_MPI_Init");
    double m = max_over_ranks(t);
    emit_json("\"init\", \"metric\": \"sdn_init\", \"t_s\": %.9f", m);
}

/* --- output ------------------------------------------------------------------------------- */

/* One JSON line on stdout (rank 0 only), flushed at once so run.py can show progress. */
void emit_json(const char *fmt, ...)
{
    if (my_rank != 0)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("{\"bench\": %s}\n", line);
    fflush(stdout);
}

void die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "coll_bench[%d]: %s\n", my_rank, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die("%s failed (error %d)", what, rc);
}

/* --- route switching (see --toggle) --------------------------------------------------------- */

static int current_routes = -1;
static long toggle_seq = 0;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int read_ack(const char *path, long *seq)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fscanf(f, "%ld", seq) == 1;
    fclose(f);
    return ok;
}

/* Collective. Sends WHAT to the harness (rank 0) and waits for its answer; no-op without --toggle. */
void harness_request(const char *what)
{
    if (!opt.toggle)
        return;
    if (my_rank == 0) {
        char req[4096], tmp[4096], ack[4096];
        toggle_seq++;
        snprintf(req, sizeof req, "%s/req", opt.toggle);
        snprintf(tmp, sizeof tmp, "%s/req.tmp", opt.toggle);
        snprintf(ack, sizeof ack, "%s/ack", opt.toggle);
        FILE *f = fopen(tmp, "w");
        if (!f || fprintf(f, "%ld %s\n", toggle_seq, what) < 0 || fclose(f) != 0)
            die("cannot write %s", tmp);
        if (rename(tmp, req) != 0)
            die("cannot rename %s", tmp);
        double t0 = MPI_Wtime();
        long seq = -1;
        while (!(read_ack(ack, &seq) && seq == toggle_seq)) {
            if (MPI_Wtime() - t0 > opt.toggle_timeout_s)
                die("no answer from the harness in %s after %.0f s", opt.toggle,
                    opt.toggle_timeout_s);
            sleep_ms(2);
        }
    }
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

/* Collective. Makes the fabric route this implementation's traffic as it would in its own job;
 * 1 if the routes changed. */
int use_routes(enum impl which)
{
    if (!opt.toggle || current_routes == (int)which)
        return 0;
    harness_request(impl_name[which]);
    current_routes = (int)which;
    return 1;
}

/* Collective. --routing-blocks: asks the harness to make the controller's default routing the one
 * of repetition `rep` ("routing:NAME"; run.py removes its override flows first), then reports it as
 * a "routing" event, so that the samples after it are that routing's. The next use_routes asks
 * again whatever it asks for. No-op without --routing-blocks. */
void use_routing_block(int rep)
{
    if (rep >= opt.nrouting)
        return;
    char what[64];
    snprintf(what, sizeof what, "routing:%s", opt.routing[rep]);
    harness_request(what);
    current_routes = -1;
    emit_json("\"routing\", \"routing\": \"%s\", \"block\": %d", opt.routing[rep], rep);
}

/* --- timing --------------------------------------------------------------------------------- */

double max_over_ranks(double t)
{
    double m = 0.0;
    check_mpi(MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    return m;
}

double *abuf_send, *abuf_recv, *abuf_ref;
unsigned char *bbuf;

void alloc_buffers(void)
{
    long max_bytes = opt.tiny_bytes > 8 ? opt.tiny_bytes : 8; /* the run's largest size */
    for (int k = 0; k < opt.nsizes; k++)
        if (opt.sizes[k] > max_bytes)
            max_bytes = opt.sizes[k];
    size_t n = (size_t)max_bytes / sizeof(double) + 1;
    abuf_send = malloc(n * sizeof(double));
    abuf_recv = malloc(n * sizeof(double));
    abuf_ref = malloc(n * sizeof(double));
    bbuf = malloc((size_t)max_bytes + 1);
    if (!abuf_send || !abuf_recv || !abuf_ref || !bbuf)
        die("out of memory for %ld-byte buffers", max_bytes);
    for (size_t i = 0; i < n; i++)
        abuf_send[i] = (double)(my_rank * 1000 + (long)(i % 1000));
}

void emit_sample(const char *coll, enum impl which, long bytes, int root, int rep, double t)
{
    emit_json("\"sample\", \"collective\": \"%s\", \"impl\": \"%s\", \"bytes\": %ld, \"root\": %d, "
              "\"rep\": %d, \"t_s\": %.9f", coll, impl_name[which], bytes, root, rep, t);
}


/* The time of an untimed-as-a-sample call right after a route switch (--settle): impl is the
 * variant's name ("openmpi", "sdnmpi" or "sdnmpi:ALG"), call its index among the switch's settle
 * calls. run.py records these apart from the samples (impl "first:" + name for call 0). */
void emit_settle(const char *coll, const char *impl, long bytes, int call, double t)
{
    emit_json("\"settle\", \"collective\": \"%s\", \"impl\": \"%s\", \"bytes\": %ld, \"call\": %d, "
              "\"t_s\": %.9f", coll, impl, bytes, call, t);
}

/* --idle-ms, --tiny-idle-ms: every rank idles `ms` after a barrier (no traffic, no route change),
 * so that the next call starts after an idle pause like the one a route switch makes, and after
 * the switch's slow tail has passed. */
void idle_pause(long ms)
{
    if (ms <= 0)
        return;
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        if (errno != EINTR)
            die("nanosleep: %s", strerror(errno));
}

/* One timed call of fn (after a barrier; the slowest rank's time). With `label` (the variant's
 * name: in a timed loop), a route switch before it is followed by --settle calls of the same
 * variant, each timed the same way and reported as a "settle" event, then --idle-ms of idling;
 * without, neither. */
double timed_settled(enum impl which, const char *coll, const char *label, long bytes, call_fn fn,
                     void *ctx)
{
    int settle = use_routes(which) && label ? opt.settle : 0;
    for (int s = 0;; s++) {
        if (s == settle && label)
            idle_pause(opt.idle_ms);
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = MPI_Wtime();
        int rc = fn(which, ctx);
        double t = MPI_Wtime() - t0;
        check_mpi(rc, coll);
        t = max_over_ranks(t);
        if (s == settle)
            return t;
        emit_settle(coll, label, bytes, s, t);
    }
}
