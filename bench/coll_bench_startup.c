/* coll_bench_startup.c -- the start-up rows (--collective startup; bench/README.md, "Start-up
 * and first-call cost"): SDN_MPI_Init, the first SDN_MPI_Allreduce on MPI_COMM_WORLD (its plan
 * and route install; --gap-ms: after that much work), each with the library's breakdown
 * (sdnmpi_test_timings), then the cached call against the same algorithm without the library
 * around it, every sample marked with whether the call ran the reconnect agreement step, then
 * (--startup-bcast-bytes N) the first SDN_MPI_Bcast of N bytes from rank 0 (its communicator
 * state, tree request and sockets) and a second one (the cached call), then (--startup-comms 1)
 * the first SDN_MPI_Allreduce on communicators made after all that (first_on_new_comms).
 *
 * Output (rank 0): {"bench": "startup", "metric": M, "t_s": slowest rank, "parts": {slot: world
 * rank 0's value, ...}} for M = "init", "first_allreduce", "first_bcast", "second_bcast",
 * "comm_HOW_create" (no parts) and "comm_HOW_first" (HOW = dup, split, lazy), each
 * followed by "_warm" with --warm and by "_" NAME with --startup-variant NAME,
 * {"bench": "startup", "metric": "cached", "variant": "direct" | "sdnmpi", "agree": 0|1, "rep": k,
 * "t_s": slowest rank} and {"bench": "startup", "metric": "dispatch", "variant": ..., "rep": k,
 * "t_s": per call on MPI_COMM_SELF, world rank 0}; after the first call, the floor (floors():
 * "floor_init_mpi", "floor_rtt", "floor_first", "rep": k), and at the end, per phase with a
 * breakdown, {"bench": "startup", "metric": "steps", "of": M, "max": {slot: largest over the ranks,
 * ..., "call": the largest rank's time in the timed call}}. */
#include <errno.h>
#include <stdint.h>
#include <mpi.h>
#include <sdnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_bench.h"

/* libsdnmpi's test hooks (sdnmpi_testing.h; the allreduce path's: coll_bench.h). */
size_t sdnmpi_test_timings(const char **names, double *values, size_t cap);
int sdnmpi_test_agree_next(void);
int sdnmpi_test_allreduce_direct(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int sdnmpi_test_last_bcast(int *rounds, long long *resent, long long *finished);
/* The floor's hooks: weak, so that a baseline coll_bench built against an older library
 * (--startup-baseline) links and measures no floor. */
int sdnmpi_test_ctrl_hello(double *connect_s, double *hello_s) __attribute__((weak));
void sdnmpi_test_wire_bytes(size_t *init_agreement, size_t *plan_outcome) __attribute__((weak));

#define MAX_SLOTS 32
#define MAX_PHASES 16
#define FLOOR_REPS 3

/* Every rank's own breakdown of the phases so far (the library's slots as each phase left them,
 * plus "call": this rank's time in the timed call), reduced to the largest over the ranks at
 * the job's end (steps_report): which step the slowest rank spent its time in. */
static struct {
    char metric[64];
    double v[MAX_SLOTS + 1];
} snaps[MAX_PHASES];
static int nsnaps;

/* Rank 0's breakdown slots whose names start with `prefix`, as a JSON object's members. */
static void parts_json(const char *prefix, char *out, size_t len)
{
    const char *names[MAX_SLOTS];
    double values[MAX_SLOTS];
    size_t n = sdnmpi_test_timings(names, values, MAX_SLOTS), used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && i < MAX_SLOTS; i++) {
        if (strncmp(names[i], prefix, strlen(prefix)) != 0 || values[i] < 0)
            continue;
        int k = snprintf(out + used, len - used, "%s\"%s\": %.9f", used ? ", " : "", names[i],
                         values[i]);
        if (k < 0 || (size_t)k >= len - used)
            die("breakdown longer than %zu bytes", len);
        used += (size_t)k;
    }
}

/* The phase's metric name: base, then "_warm" with --warm and "_" NAME with --startup-variant. */
static void metric_name(const char *base, char *out, size_t len)
{
    int k = snprintf(out, len, "%s%s%s%s", base, opt.warm ? "_warm" : "", opt.variant ? "_" : "",
                     opt.variant ? opt.variant : "");
    if (k < 0 || (size_t)k >= len)
        die("metric name %s too long", base);
}

/* t: the slowest rank's time; mine: this rank's (its breakdown is kept for steps_report if
 * mine >= 0). */
static void emit_phase_of(const char *base, const char *prefix, double t, double mine)
{
    char parts[1024], metric[64];
    metric_name(base, metric, sizeof metric);
    parts_json(prefix, parts, sizeof parts);
    emit_json("\"startup\", \"metric\": \"%s\", \"t_s\": %.9f, \"parts\": {%s}", metric, t, parts);
    if (mine < 0 || nsnaps >= MAX_PHASES)
        return;
    const char *names[MAX_SLOTS];
    size_t n = sdnmpi_test_timings(names, snaps[nsnaps].v, MAX_SLOTS);
    for (size_t i = n < MAX_SLOTS ? n : MAX_SLOTS; i < MAX_SLOTS; i++)
        snaps[nsnaps].v[i] = -1.0;
    snaps[nsnaps].v[MAX_SLOTS] = mine;
    snprintf(snaps[nsnaps].metric, sizeof snaps[nsnaps].metric, "%s", metric);
    nsnaps++;
}

static void emit_phase(const char *base, const char *prefix, double t)
{
    emit_phase_of(base, prefix, t, -1.0);
}

/* At the job's end: every kept phase's slots (those of its prefix), largest over the ranks:
 * {"bench": "startup", "metric": "steps", "of": METRIC, "max": {slot: s, ..., "call": s}}. */
static void steps_report(void)
{
    const char *names[MAX_SLOTS];
    double unused[MAX_SLOTS], mx[MAX_SLOTS + 1];
    size_t n = sdnmpi_test_timings(names, unused, MAX_SLOTS);
    if (n > MAX_SLOTS)
        n = MAX_SLOTS;
    for (int k = 0; k < nsnaps; k++) {
        check_mpi(MPI_Reduce(snaps[k].v, mx, MAX_SLOTS + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
                  "MPI_Reduce");
        const char *prefix = strncmp(snaps[k].metric, "init", 4) == 0 ? "init" : "plan";
        char out[1200];
        size_t used = 0;
        out[0] = '\0';
        for (size_t i = 0; i <= n; i++) {
            const char *name = i < n ? names[i] : "call";
            if (i < n && (strncmp(name, prefix, strlen(prefix)) != 0 || mx[i] < 0))
                continue;
            int w = snprintf(out + used, sizeof out - used, "%s\"%s\": %.9f", used ? ", " : "", name,
                             i < n ? mx[i] : mx[MAX_SLOTS]);
            if (w < 0 || (size_t)w >= sizeof out - used)
                die("steps longer than %zu bytes", sizeof out);
            used += (size_t)w;
        }
        emit_json("\"startup\", \"metric\": \"steps\", \"of\": \"%s\", \"max\": {%s}", snaps[k].metric,
                  out);
    }
}

/* The floor (bench/README.md, "The floor"): in this job, with its connections open, what any
 * SDN_MPI_Init and first call of this design must pay, FLOOR_REPS times, each kind in turn:
 * "floor_init_mpi" a Gather of 4 bytes a rank to rank 0 then a Bcast from it of Init's agreement
 * and every rank's address (rank 0 must know every host before it registers, every rank the
 * outcome after); "floor_rtt" (rank 0 alone) connect + hello on a connection of its own; and
 * "floor_first" a Bcast of a plan's outcome bytes from rank 0, a PMPI_Comm_dup (the private
 * communicator) and one 8-byte PMPI_Allreduce on it, with each part's largest time over the
 * ranks. Slowest rank, as every row. */
static void floors(void)
{
    if (sdnmpi_test_ctrl_hello == NULL || sdnmpi_test_wire_bytes == NULL)
        return; /* an older library (a baseline build): no floor */
    size_t agree_bytes = 0, outcome_bytes = 0;
    sdnmpi_test_wire_bytes(&agree_bytes, &outcome_bytes);
    size_t bbytes = agree_bytes + 4 * (size_t)nprocs;
    unsigned char *bb = calloc(bbytes, 1), *ob = calloc(outcome_bytes, 1);
    uint32_t me = (uint32_t)my_rank, *all = calloc((size_t)nprocs, sizeof *all);
    if (bb == NULL || ob == NULL || all == NULL || bbytes > (size_t)INT32_MAX)
        die("out of memory for the floor's %zu + %zu bytes", bbytes, outcome_bytes);
    for (int k = 0; k < FLOOR_REPS; k++) {
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = MPI_Wtime();
        check_mpi(PMPI_Gather(&me, 1, MPI_UINT32_T, all, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD),
                  "PMPI_Gather");
        check_mpi(PMPI_Bcast(bb, (int)bbytes, MPI_BYTE, 0, MPI_COMM_WORLD), "PMPI_Bcast");
        double t = max_over_ranks(MPI_Wtime() - t0);
        emit_json("\"startup\", \"metric\": \"floor_init_mpi\", \"rep\": %d, \"t_s\": %.9f, "
                  "\"bytes\": %zu", k, t, bbytes);

        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double conn = 0.0, hello = 0.0;
        if (my_rank == 0 && sdnmpi_test_ctrl_hello(&conn, &hello) != 0)
            die("the floor's controller round trip failed: is SDN_MPI_CONTROLLER reachable?");
        emit_json("\"startup\", \"metric\": \"floor_rtt\", \"rep\": %d, \"t_s\": %.9f, "
                  "\"parts\": {\"connect\": %.9f, \"hello\": %.9f}", k, conn + hello, conn, hello);

        MPI_Comm dup = MPI_COMM_NULL;
        double one = 1.0 + my_rank, sum = 0.0, dt[4];
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        t0 = MPI_Wtime();
        check_mpi(PMPI_Bcast(ob, (int)outcome_bytes, MPI_BYTE, 0, MPI_COMM_WORLD), "PMPI_Bcast");
        double t1 = MPI_Wtime();
        check_mpi(PMPI_Comm_dup(MPI_COMM_WORLD, &dup), "PMPI_Comm_dup");
        double t2 = MPI_Wtime();
        check_mpi(PMPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, dup), "PMPI_Allreduce");
        double t3 = MPI_Wtime();
        if (sum != (double)nprocs * (nprocs + 1) / 2)
            die("the floor's allreduce gave %g", sum);
        dt[0] = t3 - t0, dt[1] = t1 - t0, dt[2] = t2 - t1, dt[3] = t3 - t2;
        double mx[4];
        check_mpi(MPI_Reduce(dt, mx, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
        check_mpi(PMPI_Comm_free(&dup), "PMPI_Comm_free");
        emit_json("\"startup\", \"metric\": \"floor_first\", \"rep\": %d, \"t_s\": %.9f, \"parts\": "
                  "{\"bcast\": %.9f, \"dup\": %.9f, \"call\": %.9f}, \"bytes\": %zu", k, mx[0], mx[1],
                  mx[2], mx[3], outcome_bytes);
    }
    free(bb), free(ob), free(all);
}

/* --gap-ms: the application's work between Init and its first collective (a sleep: the
 * controller's work, not this rank's CPU, is what the gap is for). */
static void gap(void)
{
    struct timespec ts = {opt.gap_ms / 1000, (opt.gap_ms % 1000) * 1000000L};
    while (opt.gap_ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* One SDN_MPI_Bcast of opt.bcast_bytes from rank 0 on MPI_COMM_WORLD, timed (slowest rank) and
 * checked; dies unless it took the multicast path. */
static double timed_bcast(unsigned char *buf, int seed)
{
    for (long i = 0; i < opt.bcast_bytes; i++)
        buf[i] = my_rank == 0 ? (unsigned char)(i * 31 + seed) : 0;
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    check_mpi(SDN_MPI_Bcast(buf, (int)opt.bcast_bytes, MPI_BYTE, 0, MPI_COMM_WORLD),
              "SDN_MPI_Bcast");
    double t = MPI_Wtime() - t0;
    int path = sdnmpi_test_last_bcast(NULL, NULL, NULL);
    if (path != 2 && path != 3)
        die("the first SDN_MPI_Bcast took path %d, not multicast (2, 3)", path);
    for (long i = 0; i < opt.bcast_bytes; i++)
        if (buf[i] != (unsigned char)(i * 31 + seed))
            die("SDN_MPI_Bcast: byte %ld differs from the root's", i);
    return max_over_ranks(t);
}

static void first_bcast(void)
{
    if (opt.bcast_bytes <= 0)
        return;
    unsigned char *buf = malloc((size_t)opt.bcast_bytes);
    if (buf == NULL)
        die("out of memory for a %ld-byte Bcast", opt.bcast_bytes);
    double t = timed_bcast(buf, 1);
    emit_phase("first_bcast", "bcast", t);
    t = timed_bcast(buf, 2);
    emit_phase("second_bcast", "none", t);
    free(buf);
}

/* One 8-byte allreduce of the given variant on comm, timed (slowest rank of the world; *mine:
 * this rank's time); want: the sum of 1 + world rank over comm's ranks. */
static double timed_small_mine(MPI_Comm comm, double want, int sdn, int *agree, double *mine)
{
    double one = 1.0 + my_rank, sum = 0.0;
    *agree = sdn ? sdnmpi_test_agree_next() : 0;
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    int rc = sdn ? SDN_MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, comm)
                 : sdnmpi_test_allreduce_direct(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    double t = MPI_Wtime() - t0;
    check_mpi(rc, sdn ? "SDN_MPI_Allreduce" : "sdnmpi_test_allreduce_direct");
    if (sum != want)
        die("8-byte allreduce gave %g, want %g", sum, want);
    *mine = t;
    return max_over_ranks(t);
}

static double timed_small_on(MPI_Comm comm, double want, int sdn, int *agree)
{
    double mine = 0.0;
    return timed_small_mine(comm, want, sdn, agree, &mine);
}

/* One 8-byte allreduce of the given variant on MPI_COMM_WORLD, timed (slowest rank). */
static double timed_small(int sdn, int *agree)
{
    return timed_small_on(MPI_COMM_WORLD, (double)nprocs * (nprocs + 1) / 2, sdn, agree);
}

/* --startup-comms 1: the first 8-byte SDN_MPI_Allreduce on a communicator made now (issue 17,
 * plan-ahead at creation), for three ways of making it, in this order: "dup" (SDN_MPI_Comm_dup of
 * the world, whose plan is made: its routes reused, no request), "split" (two halves by rank
 * parity through SDN_MPI_Comm_split: each half's leader, world rank 0 or 1, sends its request at
 * creation) and "lazy" (the same halves through plain PMPI_Comm_split: no record, each half's first
 * call asks). World rank 1 opens its connection (hello) in "split", so "lazy" does not pay it: a
 * bias against plan-ahead. Each: the creation (slowest rank), the --gap-ms work, the first call
 * (slowest rank, with the plan's breakdown: world rank 0's, a leader in each). */
static void first_on_new_comms(void)
{
    static const char *const how[3] = {"dup", "split", "lazy"};
    for (int k = 0; k < 3; k++) {
        MPI_Comm comm = MPI_COMM_NULL;
        check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double t0 = MPI_Wtime();
        if (k == 0)
            check_mpi(SDN_MPI_Comm_dup(MPI_COMM_WORLD, &comm), "SDN_MPI_Comm_dup");
        else if (k == 1)
            check_mpi(SDN_MPI_Comm_split(MPI_COMM_WORLD, my_rank % 2, my_rank, &comm),
                      "SDN_MPI_Comm_split");
        else
            check_mpi(PMPI_Comm_split(MPI_COMM_WORLD, my_rank % 2, my_rank, &comm),
                      "PMPI_Comm_split");
        double t = max_over_ranks(MPI_Wtime() - t0);
        char base[64];
        snprintf(base, sizeof base, "comm_%s_create", how[k]);
        emit_phase(base, "none", t);
        gap();
        int agree = 0, n = k == 0 ? nprocs : (nprocs - my_rank % 2 + 1) / 2;
        /* the sum of 1 + r over the world ranks r of this rank's half (or of the world) */
        double want = k == 0 ? (double)nprocs * (nprocs + 1) / 2
                             : (double)n * (my_rank % 2 + 1) + 2.0 * n * (n - 1) / 2;
        double mine = 0.0;
        t = timed_small_mine(comm, want, 1, &agree, &mine);
        if (sdnmpi_test_last_path() != 2)
            die("the first 8-byte SDN_MPI_Allreduce on the %s communicator took path %d, not "
                "recursive doubling (2)", how[k], sdnmpi_test_last_path());
        snprintf(base, sizeof base, "comm_%s_first", how[k]);
        emit_phase_of(base, "plan", t, mine);
        check_mpi(MPI_Comm_free(&comm), "MPI_Comm_free");
    }
}

/* --warm: every pair of ranks exchanges a message first. Open MPI opens its TCP connections
 * lazily, at a pair's first message: without this, Init's exchange pays for opening them (which
 * an application's first collectives pay anyway, with or without sdnmpi). */
static void warm_connections(void)
{
    char out = 1, in = 0;
    for (int k = 1; k < nprocs; k++)
        check_mpi(MPI_Sendrecv(&out, 1, MPI_CHAR, (my_rank + k) % nprocs, 0, &in, 1, MPI_CHAR,
                               (my_rank - k + nprocs) % nprocs, 0, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
}

#define DISPATCH_BLOCKS 20
#define DISPATCH_CALLS 1000

/* The library's own per-call cost without a network: world rank 0 alone, on MPI_COMM_SELF (one
 * rank: a plan without a request, recursive doubling is a copy), blocks of back-to-back calls of
 * either variant, alternating; one sample per block = its time per call. */
static void dispatch_cost(void)
{
    if (my_rank != 0)
        return;
    double one = 1.0, sum = 0.0;
    check_mpi(SDN_MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF),
              "SDN_MPI_Allreduce(MPI_COMM_SELF)");
    for (int b = 0; b < 2 * DISPATCH_BLOCKS; b++) {
        int sdn = b % 2;
        double t0 = MPI_Wtime();
        for (int c = 0; c < DISPATCH_CALLS; c++) {
            int rc = sdn ? SDN_MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF)
                         : sdnmpi_test_allreduce_direct(&one, &sum, 1, MPI_DOUBLE, MPI_SUM,
                                                        MPI_COMM_SELF);
            check_mpi(rc, "8-byte allreduce on MPI_COMM_SELF");
        }
        double t = (MPI_Wtime() - t0) / DISPATCH_CALLS;
        if (sum != 1.0)
            die("allreduce on MPI_COMM_SELF gave %g", sum);
        emit_json("\"startup\", \"metric\": \"dispatch\", \"variant\": \"%s\", \"rep\": %d, "
                  "\"t_s\": %.12f", sdn ? "sdnmpi" : "direct", b / 2, t);
    }
}

void run_startup(void)
{
    /* The SDN path's costs: every SDN_MPI_Allreduce here is forced to recursive doubling (the
     * direct variant's algorithm), also below the library's size threshold. */
    force_alg(alg_index("rd"));
    use_routes(SDNMPI);
    if (opt.warm)
        warm_connections();
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    check_mpi(SDN_MPI_Init(), "SDN_MPI_Init");
    double mine = MPI_Wtime() - t0;
    emit_phase_of("init", "init", max_over_ranks(mine), mine);

    gap();
    int agree = 0;
    double t = timed_small_mine(MPI_COMM_WORLD, (double)nprocs * (nprocs + 1) / 2, 1, &agree, &mine);
    if (sdnmpi_test_last_path() != 2)
        die("the first 8-byte SDN_MPI_Allreduce took path %d, not recursive doubling (2): is the "
            "controller reachable?", sdnmpi_test_last_path());
    emit_phase_of("first_allreduce", "plan", t, mine);
    floors();

    /* Cached calls: the two variants alternate call by call; SDN calls with and without the
     * agreement step come in the library's own proportion (one in SDNMPI_AGREE_EVERY). */
    for (int k = 0; k < opt.tiny_reps; k++)
        for (int j = 0; j < 2; j++) {
            int sdn = (j + k) % 2;
            t = timed_small(sdn, &agree);
            emit_json("\"startup\", \"metric\": \"cached\", \"variant\": \"%s\", \"agree\": %d, "
                      "\"rep\": %d, \"t_s\": %.9f", sdn ? "sdnmpi" : "direct", agree, k, t);
        }
    first_bcast();
    if (opt.startup_comms)
        first_on_new_comms();
    dispatch_cost();
    steps_report();
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}
