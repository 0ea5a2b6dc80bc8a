/*
 * coll_bench.c -- the benchmark program of `make bench` (bench/run.py starts it under mpirun).
 *
 * One run measures one fabric configuration (routing x placement x p). Inside it the two
 * implementations alternate call by call, so that both see the same fabric at (nearly) the same
 * time: Open MPI's own collective (MPI_Allreduce / MPI_Bcast) and sdnmpi's (SDN_MPI_Allreduce /
 * SDN_MPI_Bcast). Each measurement is
 *
 *     [switch the fabric's routes to this implementation's, see --toggle]
 *     MPI_Barrier; t0 = MPI_Wtime(); <one collective call>; t = MPI_Wtime() - t0;
 *     MPI_Reduce(t, MAX) to rank 0
 *
 * i.e. the time of the slowest rank. Repetitions are the outer loop and sizes (and roots) the inner
 * one; at each point both implementations run once, and which one goes first alternates from one
 * point to the next (O S | S O | O S ...), and for the same point from one repetition to the next.
 * So slow drifts of the machine spread over every size and both implementations alike, each goes
 * first equally often, and the fabric's routes change only once per point (see --toggle).
 * --calls C,C,... (one per size, allreduce): at that point each implementation makes C calls back to
 * back instead of one, so short calls get many samples for the same number of route switches.
 *
 * Rank 0 prints one JSON object per line on stdout, each starting with {"bench": ...}; run.py
 * collects them. Results are checked (outside the timed region): sdnmpi's allreduce result must be
 * bit-identical to Open MPI's (the values are small integers as doubles, so every summation order is
 * exact), and every rank must hold the root's bytes after a bcast.
 *
 * --toggle DIR: before an implementation's calls, rank 0 writes "SEQ WHAT" to DIR/req and waits for
 * DIR/ack to hold SEQ; then all ranks pass a barrier. run.py answers it: for "openmpi" it removes the
 * job's sdnmpi flows from the switches (so Open MPI runs on the controller's default routing, as it
 * would without sdnmpi), for "sdnmpi" it puts them back, and each time it waits until Open vSwitch
 * has revalidated its cached datapath flows. Before SDN_MPI_Finalize the program sends "end": the
 * flows are back and run.py reads the job's plans and trees from the controller, before the
 * release removes them. All of this happens outside the timed region.
 * --routing-blocks NAME,...: (allreduce, with --toggle) before each repetition, rank 0 sends
 * "routing:NAME" the same way; run.py makes NAME the controller's default routing (bench_rotate.py)
 * and the program prints a "routing" line, so each repetition is one block of one routing.
 *
 * Modes (--collective):
 *   allreduce  SDN_MPI_Init time, the first SDN_MPI_Allreduce (plan + install), tiny-message
 *              calls (the per-call overhead once the plan is cached), then every size.
 *   bcast      SDN_MPI_Init time, then for every root: the first call of each implementation, then
 *              every size. Without SDN_MPI_Bcast in libsdnmpi (HAVE_SDN_BCAST 0) only Open MPI.
 *   init       SDN_MPI_Init, the first SDN_MPI_Allreduce and a few cached ones (for the overhead
 *              rows; run with --lib-verbose to get the library's timing line from rank 0).
 *   startup    SDN_MPI_Init and the first SDN_MPI_Allreduce with the library's breakdown, then
 *              --tiny-reps cached 8-byte calls against the same algorithm without the library
 *              around it, then the first and second SDN_MPI_Bcast (coll_bench_startup.c).
 *   allgather, reduce, alltoall   SDN_MPI_Init time, one checked call of each implementation per
 *              size (also the warm-up and the first plan), then every size (run_more).
 *
 * Build: see bench/Makefile (defines HAVE_SDN_BCAST from `nm libsdnmpi.a`).
 */
#include <errno.h>
#include <mpi.h>
#include <sdnmpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_bench.h"

#ifndef HAVE_SDN_BCAST
#define HAVE_SDN_BCAST 0
#endif

#if HAVE_SDN_BCAST
/* Declared here too in case the header of the library being built does not declare it yet; the
 * signature is MPI_Bcast's. */
int SDN_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
#endif

/* --- options ------------------------------------------------------------------------------ */

static long parse_bytes(const char *s)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0)
        die("bad byte count '%s'", s);
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end)
        die("bad byte count '%s'", s);
    return v;
}

static int parse_list(const char *s, long *out, int max)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max)
            die("too many list entries in '%s'", s);
        out[n++] = parse_bytes(tok);
    }
    return n;
}

/* --routing-blocks NAME,NAME,...: one routing policy name (letters, digits, '-', '_') per repetition. */
static void parse_routings(const char *s)
{
    if (strlen(s) >= sizeof opt.routing_names)
        die("--routing-blocks is too long");
    snprintf(opt.routing_names, sizeof opt.routing_names, "%s", s);
    opt.nrouting = 0;
    for (char *tok = strtok(opt.routing_names, ","); tok; tok = strtok(NULL, ",")) {
        if (opt.nrouting == MAX_LIST)
            die("too many --routing-blocks entries");
        if (strlen(tok) > 32 || strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(tok))
            die("bad --routing-blocks entry '%s'", tok);
        opt.routing[opt.nrouting++] = tok;
    }
}

static void usage(void)
{
    if (my_rank == 0)
        fprintf(stderr,
                "usage: coll_bench --collective allreduce|bcast|init|startup|allgather|reduce|alltoall --sizes N,N,... [--reps R]\n"
                "       [--roots r,r] [--tiny-reps T] [--tiny-block B] [--tiny-bytes N]\n"
                "       [--calls C,C,...] [--warmup-max BYTES] [--toggle DIR] [--lib-verbose]\n"
                "       [--sdn-algs rd,rabenseifner,hier,hier-dN (N 1-4, 6, 8, 12, 16),hier-sNk (N 4, 8, 16, 32)]\n"
                "       [--warm] [--gap-ms MS] [--routing-blocks NAME,NAME,... (allreduce: one per rep)]\n"
                "       [--settle N] [--idle-ms MS] [--tiny-idle-ms MS]\n"
                "       [--startup-variant NAME] [--startup-bcast-bytes N] [--startup-comms 1]\n");
    MPI_Finalize();
    exit(2);
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED() do { if (!v) usage(); i++; } while (0)
        if (!strcmp(a, "--collective")) { NEED(); opt.collective = v; }
        else if (!strcmp(a, "--sizes")) { NEED(); opt.nsizes = parse_list(v, opt.sizes, MAX_LIST); }
        else if (!strcmp(a, "--calls")) { NEED(); opt.ncalls = parse_list(v, opt.calls, MAX_LIST); }
        else if (!strcmp(a, "--roots")) {
            NEED();
            long tmp[MAX_LIST];
            opt.nroots = parse_list(v, tmp, MAX_LIST);
            for (int k = 0; k < opt.nroots; k++)
                opt.roots[k] = (int)tmp[k];
        }
        else if (!strcmp(a, "--reps")) { NEED(); opt.reps = atoi(v); }
        else if (!strcmp(a, "--tiny-reps")) { NEED(); opt.tiny_reps = atoi(v); }
        else if (!strcmp(a, "--tiny-block")) { NEED(); opt.tiny_block = atoi(v); }
        else if (!strcmp(a, "--tiny-bytes")) { NEED(); opt.tiny_bytes = parse_bytes(v); }
        else if (!strcmp(a, "--warmup-max")) { NEED(); opt.warmup_max = parse_bytes(v); }
        else if (!strcmp(a, "--toggle")) { NEED(); opt.toggle = v; }
        else if (!strcmp(a, "--toggle-timeout")) { NEED(); opt.toggle_timeout_s = atof(v); }
        else if (!strcmp(a, "--lib-verbose")) opt.lib_verbose = 1;
        else if (!strcmp(a, "--warm")) opt.warm = 1;
        else if (!strcmp(a, "--settle")) { NEED(); opt.settle = atoi(v); }
        else if (!strcmp(a, "--idle-ms")) { NEED(); opt.idle_ms = atol(v); }
        else if (!strcmp(a, "--tiny-idle-ms")) { NEED(); opt.tiny_idle_ms = atol(v); }
        else if (!strcmp(a, "--gap-ms")) { NEED(); opt.gap_ms = atol(v); }
        else if (!strcmp(a, "--routing-blocks")) { NEED(); parse_routings(v); }
        else if (!strcmp(a, "--startup-variant")) { NEED(); opt.variant = v; }
        else if (!strcmp(a, "--startup-bcast-bytes")) { NEED(); opt.bcast_bytes = parse_bytes(v); }
        else if (!strcmp(a, "--startup-comms")) { NEED(); opt.startup_comms = atoi(v); }
        else if (!strcmp(a, "--sdn-algs")) {
            NEED();
            char list[256];
            snprintf(list, sizeof list, "%s", v);
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                int idx = alg_index(tok);
                if (idx < 0 || opt.nalgs == (int)(sizeof opt.algs / sizeof opt.algs[0]))
                    die("bad --sdn-algs entry '%s' (rd, rabenseifner, hier, hier-dN)", tok);
                opt.algs[opt.nalgs++] = idx;
            }
        }
        else usage();
#undef NEED
    }
    if (opt.reps < 1 || opt.tiny_block < 1 || opt.tiny_reps < 0)
        usage();
    if (opt.nrouting && (opt.nrouting != opt.reps || strcmp(opt.collective, "allreduce")))
        die("--routing-blocks wants one entry per repetition (%d for --reps %d), allreduce only", opt.nrouting,
            opt.reps);
    if (opt.ncalls && opt.ncalls != opt.nsizes)
        die("--calls has %d entries for %d sizes", opt.ncalls, opt.nsizes);
    if (opt.settle < 0 || opt.settle > 4 || opt.idle_ms < 0 || opt.idle_ms > 10000 ||
        opt.tiny_idle_ms < 0 || opt.tiny_idle_ms > 10000)
        die("--settle wants 0..4, --idle-ms and --tiny-idle-ms 0..10000");
    for (int k = 0; k < opt.ncalls; k++)
        if (opt.calls[k] < 1 || opt.calls[k] > 1000)
            die("--calls entries must be 1..1000, got %ld", opt.calls[k]);
    for (int k = 0; k < opt.nsizes; k++)
        if (opt.sizes[k] % 8)
            die("sizes must be multiples of 8 bytes (doubles), got %ld", opt.sizes[k]);
    for (int k = 0; k < opt.nroots; k++)
        if (opt.roots[k] < 0 || opt.roots[k] >= nprocs)
            die("root %d out of range", opt.roots[k]);
    if (opt.nroots == 0)
        opt.roots[opt.nroots++] = 0;
}

static int call_allreduce(enum impl which, void *count) /* a call_fn; count: int doubles */
{
    int n = *(int *)count;
    return which == SDNMPI
               ? SDN_MPI_Allreduce(abuf_send, abuf_recv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
               : MPI_Allreduce(abuf_send, abuf_recv, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

/* One timed allreduce of `bytes` bytes (doubles, SUM): the slowest rank's time. In the timed loop
 * (`label`: the variant's name) a route switch is followed by --settle calls (timed_settled). */
static double timed_allreduce_as(enum impl which, long bytes, const char *label)
{
    int count = (int)(bytes / (long)sizeof(double));
    return timed_settled(which, "allreduce", label, bytes, call_allreduce, &count);
}

/* Outside the timed loop (first call, 8-byte blocks, warm-up): no settle calls. */
static double timed_allreduce(enum impl which, long bytes)
{
    return timed_allreduce_as(which, bytes, NULL);
}

static unsigned char pattern(long i, int root, int rep)
{
    return (unsigned char)((i * 31 + root * 7 + rep * 13) & 0xff);
}

static int bcast_bad; /* ranks x calls whose buffer was wrong */

/* One timed bcast of `bytes` bytes from `root`; returns the slowest rank's time. */
static double timed_bcast(enum impl which, long bytes, int root, int tag)
{
    int count = (int)bytes;
    if (my_rank == root)
        for (long i = 0; i < bytes; i++)
            bbuf[i] = pattern(i, root, tag);
    else
        memset(bbuf, 0, (size_t)bytes);
    use_routes(which);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    int rc;
#if HAVE_SDN_BCAST
    rc = which == SDNMPI ? SDN_MPI_Bcast(bbuf, count, MPI_BYTE, root, MPI_COMM_WORLD)
                         : MPI_Bcast(bbuf, count, MPI_BYTE, root, MPI_COMM_WORLD);
#else
    if (which == SDNMPI)
        die("SDN_MPI_Bcast is not in this libsdnmpi build");
    rc = MPI_Bcast(bbuf, count, MPI_BYTE, root, MPI_COMM_WORLD);
#endif
    double t = MPI_Wtime() - t0;
    check_mpi(rc, which == SDNMPI ? "SDN_MPI_Bcast" : "MPI_Bcast");
    for (long i = 0; i < bytes; i++)
        if (bbuf[i] != pattern(i, root, tag)) {
            bcast_bad++;
            break;
        }
    return max_over_ranks(t);
}

/* --- phases --------------------------------------------------------------------------------- */

/* The first SDN_MPI_Allreduce on MPI_COMM_WORLD: the plan request and the route install. Forced
 * to recursive doubling, so that it takes the SDN path below the library's size threshold too. */
static void first_allreduce(void)
{
    use_routes(SDNMPI);
    force_alg(alg_index("rd"));
    double t = timed_allreduce(SDNMPI, opt.tiny_bytes);
    force_alg(-1);
    emit_json("\"init\", \"metric\": \"first_allreduce\", \"bytes\": %ld, \"t_s\": %.9f",
              opt.tiny_bytes, t);
}

/* Tiny messages, alternating blocks of calls (O..O S..S S..S O..O ...). With --tiny-idle-ms, a
 * block that follows a route switch starts after --settle calls (reported as "settle" events) and
 * that long of idling: a switch slows the next ~8 small calls, which would otherwise land in
 * whichever variant came after it. */
static void tiny_allreduce(void)
{
    int blocks = (opt.tiny_reps + opt.tiny_block - 1) / opt.tiny_block;
    for (int b = 0; b < 2 * blocks; b++) {
        enum impl which = ((b + 1) / 2) % 2 == 0 ? OPENMPI : SDNMPI;
        int first_rep = (b / 2) * opt.tiny_block;
        if (use_routes(which) && opt.tiny_idle_ms > 0) {
            for (int s = 0; s < opt.settle; s++)
                emit_settle("allreduce", impl_name[which], opt.tiny_bytes, s,
                            timed_allreduce(which, opt.tiny_bytes));
            idle_pause(opt.tiny_idle_ms);
        }
        for (int k = 0; k < opt.tiny_block && first_rep + k < opt.tiny_reps; k++) {
            double t = timed_allreduce(which, opt.tiny_bytes);
            emit_sample("allreduce", which, opt.tiny_bytes, -1, first_rep + k, t);
        }
    }
}

static int check_allreduce(long bytes, int sdn_first)
{
    /* Both results are exact (integers in doubles): they must be bit-identical. The order of the
     * two calls does not matter; alternating it saves route switches. */
    int count = (int)(bytes / (long)sizeof(double));
    for (int j = 0; j < 2; j++) {
        if ((j == 0) == (sdn_first != 0)) {
            use_routes(SDNMPI);
            check_mpi(SDN_MPI_Allreduce(abuf_send, abuf_recv, count, MPI_DOUBLE, MPI_SUM,
                                        MPI_COMM_WORLD),
                      "SDN_MPI_Allreduce");
        } else {
            use_routes(OPENMPI);
            check_mpi(MPI_Allreduce(abuf_send, abuf_ref, count, MPI_DOUBLE, MPI_SUM,
                                    MPI_COMM_WORLD),
                      "MPI_Allreduce");
        }
    }
    int ok = memcmp(abuf_ref, abuf_recv, (size_t)count * sizeof(double)) == 0, all = 0;
    for (int i = 0; ok && i < count; i++)
        ok = abuf_ref[i] == (double)nprocs * (i % 1000) + 1000.0 * nprocs * (nprocs - 1) / 2;
    check_mpi(MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD), "MPI_Reduce");
    return all;
}

static void run_allreduce(void)
{
    sdn_init();
    first_allreduce();
    tiny_allreduce();
    /* Warm-up (untimed): each implementation once per size up to --warmup-max, which opens the
     * TCP connections of every algorithm both use; then the results are compared once per size. */
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < opt.nsizes; k++)
            if (opt.sizes[k] <= opt.warmup_max)
                (void)timed_allreduce(w == 0 ? OPENMPI : SDNMPI, opt.sizes[k]);
    for (int a = 0; a < opt.nalgs; a++) {
        force_alg(opt.algs[a]);
        for (int k = 0; k < opt.nsizes; k++) {
            if (opt.sizes[k] <= opt.warmup_max)
                (void)timed_allreduce(SDNMPI, opt.sizes[k]);
            int ok = check_allreduce(opt.sizes[k], 1);
            emit_json("\"check\", \"collective\": \"allreduce\", \"alg\": \"%s\", \"bytes\": %ld, "
                      "\"ok\": %s", alg_entry(opt.algs[a])->name, opt.sizes[k],
                      ok ? "true" : "false");
        }
        force_alg(-1);
    }
    for (int k = 0; k < opt.nsizes; k++) {
        int ok = check_allreduce(opt.sizes[k], k % 2);
        emit_json("\"check\", \"collective\": \"allreduce\", \"bytes\": %ld, \"ok\": %s",
                  opt.sizes[k], ok ? "true" : "false");
        if (!ok && my_rank == 0)
            fprintf(stderr, "coll_bench: SDN_MPI_Allreduce result differs at %ld bytes\n",
                    opt.sizes[k]);
    }
    /* Each repetition visits every size; per size, each implementation makes --calls calls back
     * to back (one route switch per implementation, however many calls), first one, then the
     * other, alternating which goes first. With --sdn-algs, SDN_MPI_Allreduce forced to each
     * listed algorithm follows as further variants ("sdnmpi:ALG", on sdnmpi's routes), the order
     * of all variants rotating from point to point; a forced call whose algorithm's preconditions
     * do not hold (the library took another path) gives no sample. */
    int nvar = 2 + opt.nalgs;
    for (int rep = 0; rep < opt.reps; rep++) {
        use_routing_block(rep); /* --routing-blocks: this repetition's default routing */
        for (int k = 0; k < opt.nsizes; k++) {
            int calls = opt.ncalls ? (int)opt.calls[k] : 1;
            for (int j = 0; j < nvar; j++) {
                int var = (j + rep + k) % nvar;
                for (int c = 0; c < calls; c++) {
                    if (var < 2) {
                        enum impl which = (enum impl)var;
                        double t = timed_allreduce_as(which, opt.sizes[k], impl_name[which]);
                        if (which == SDNMPI) /* with the algorithm the library chose */
                            emit_json("\"sample\", \"collective\": \"allreduce\", "
                                      "\"impl\": \"sdnmpi\", "
                                      "\"bytes\": %ld, \"root\": -1, \"rep\": %d, \"t_s\": %.9f, "
                                      "\"path\": \"%s\"", opt.sizes[k], rep * calls + c, t,
                                      alg_name(sdnmpi_test_last_path()));
                        else
                            emit_sample("allreduce", which, opt.sizes[k], -1, rep * calls + c, t);
                        continue;
                    }
                    int a = opt.algs[var - 2], path = alg_entry(a)->path;
                    char label[32];
                    snprintf(label, sizeof label, "sdnmpi:%s", alg_entry(a)->name);
                    force_alg(a);
                    double t = timed_allreduce_as(SDNMPI, opt.sizes[k], label);
                    int took = sdnmpi_test_last_path();
                    force_alg(-1);
                    if (took == path)
                        emit_json("\"sample\", \"collective\": \"allreduce\", "
                                  "\"impl\": \"sdnmpi:%s\", "
                                  "\"bytes\": %ld, \"root\": -1, \"rep\": %d, \"t_s\": %.9f",
                                  alg_entry(a)->name, opt.sizes[k], rep * calls + c, t);
                }
            }
        }
        emit_json("\"rep_done\", \"collective\": \"allreduce\", \"rep\": %d", rep);
    }
}

static void run_bcast(void)
{
    sdn_init();
    int have = HAVE_SDN_BCAST;
    int nimpl = have ? 2 : 1;
    long first = opt.nsizes ? opt.sizes[0] : 65536;
    int tag = 1000;
    /* First call of each implementation per root (untimed as a sample; the SDN one plans the
     * tree and is reported as an init metric). */
    for (int r = 0; r < opt.nroots; r++)
        for (int w = 0; w < nimpl; w++) {
            double t = timed_bcast((enum impl)w, first, opt.roots[r], tag++);
            if (w == SDNMPI)
                emit_json("\"init\", \"metric\": \"first_bcast\", \"root\": %d, \"bytes\": %ld, "
                          "\"t_s\": %.9f", opt.roots[r], first, t);
        }
    for (int w = 0; w < nimpl; w++)
        for (int r = 0; r < opt.nroots; r++)
            for (int k = 0; k < opt.nsizes; k++)
                if (opt.sizes[k] <= opt.warmup_max)
                    (void)timed_bcast((enum impl)w, opt.sizes[k], opt.roots[r], tag++);
    for (int rep = 0; rep < opt.reps; rep++) {
        for (int r = 0; r < opt.nroots; r++)
            for (int k = 0; k < opt.nsizes; k++) {
                int point = r * opt.nsizes + k;
                for (int j = 0; j < nimpl; j++) {
                    enum impl which = have ? (enum impl)((j + point + rep) % 2) : OPENMPI;
                    double t = timed_bcast(which, opt.sizes[k], opt.roots[r], rep);
                    emit_sample("bcast", which, opt.sizes[k], opt.roots[r], rep, t);
                }
            }
        emit_json("\"rep_done\", \"collective\": \"bcast\", \"rep\": %d", rep);
    }
    int bad = 0;
    check_mpi(MPI_Reduce(&bcast_bad, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
    emit_json("\"check\", \"collective\": \"bcast\", \"ok\": %s, \"bad\": %d",
              bad ? "false" : "true", bad);
}

/* The SDN path's costs: its cached calls are forced to recursive doubling like the first. */
static void run_init(void)
{
    sdn_init();
    first_allreduce();
    force_alg(alg_index("rd"));
    for (int k = 0; k < opt.tiny_reps; k++) {
        double t = timed_allreduce(SDNMPI, opt.tiny_bytes);
        emit_json("\"init\", \"metric\": \"cached_allreduce\", \"bytes\": %ld, \"t_s\": %.9f",
                  opt.tiny_bytes, t);
    }
    force_alg(-1);
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    parse_options(argc, argv);
    if (opt.lib_verbose && my_rank == 0)
        setenv("SDN_MPI_VERBOSE", "1", 1); /* read by SDN_MPI_Init on this rank only */
    alloc_buffers();
    emit_json("\"meta\", \"collective\": \"%s\", \"nprocs\": %d, \"have_sdn_bcast\": %s, "
              "\"toggle\": %s, \"reps\": %d", opt.collective, nprocs,
              HAVE_SDN_BCAST ? "true" : "false", opt.toggle ? "true" : "false", opt.reps);
    if (!strcmp(opt.collective, "allreduce"))
        run_allreduce();
    else if (!strcmp(opt.collective, "bcast"))
        run_bcast();
    else if (!strcmp(opt.collective, "init"))
        run_init();
    else if (!strcmp(opt.collective, "startup"))
        run_startup();
    else if (!strcmp(opt.collective, "allgather") || !strcmp(opt.collective, "reduce")
             || !strcmp(opt.collective, "alltoall"))
        run_more();
    else
        usage();
    /* Leave the routes as the job made them, so SDN_MPI_Finalize releases a consistent state, and
     * let the harness read the job's plans and trees before the release removes them. */
    use_routes(SDNMPI);
    harness_request("end");
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    SDN_MPI_Finalize();
    emit_json("\"done\"");
    free(abuf_send);
    free(abuf_recv);
    free(abuf_ref);
    free(bbuf);
    MPI_Finalize();
    return 0;
}
