/* coll_bench.h -- what the benchmark program's units share (coll_bench.c: options, allreduce,
 * bcast, init and main; coll_bench_io.c: the shared state and SDN_MPI_Init, output, route
 * switching, timing and buffers; coll_bench_algs.c: the --sdn-algs entries; coll_bench_more.c:
 * Allgather, Reduce, Alltoall;
 * coll_bench_startup.c: start-up and first-call cost). */
#ifndef COLL_BENCH_H
#define COLL_BENCH_H

#include <mpi.h>

enum impl { OPENMPI = 0, SDNMPI = 1 };
extern const char *const impl_name[2]; /* "openmpi", "sdnmpi" */

#define MAX_LIST 64

struct options {
    const char *collective;
    long sizes[MAX_LIST];
    int nsizes;
    long calls[MAX_LIST];           /* back-to-back timed calls per implementation per point */
    int ncalls;
    int roots[MAX_LIST];
    int nroots;
    int reps;
    int tiny_reps;
    int tiny_block;
    long tiny_bytes;
    long warmup_max;
    const char *toggle;
    int lib_verbose;
    double toggle_timeout_s;
    int algs[8];                    /* --sdn-algs: libsdnmpi algorithms also timed alone (entries of
                                       coll_bench_algs.c's entries) */
    int nalgs;
    int warm;                       /* --warm: startup mode warms MPI's connections before Init */
    long gap_ms;                    /* --gap-ms: startup mode's work between Init and the first call */
    const char *variant;            /* --startup-variant: appended to the startup metrics' names */
    long bcast_bytes;               /* --startup-bcast-bytes: the first SDN_MPI_Bcast's size (0: none) */
    int startup_comms;              /* --startup-comms 1: startup mode's new communicators' rows */
    int settle;                     /* --settle N: calls after each route switch before the timed one
                                       (allreduce, allgather, reduce, alltoall), timed as "settle" events */
    long idle_ms;                   /* --idle-ms MS: an idle pause (all ranks) before each timed call of those
                                       loops, after its settle calls (an experiment: idle vs route switch) */
    long tiny_idle_ms;              /* --tiny-idle-ms MS: after the route switch before a block of tiny
                                       calls, --settle untimed calls, then an idle pause of MS (all ranks) */
    char routing_names[512];        /* --routing-blocks NAME,...: the controller's default routing per
                                       repetition of the allreduce loop (run.py sets it between them) */
    const char *routing[MAX_LIST];  /* pointers into routing_names, one per repetition */
    int nrouting;
};

extern int my_rank, nprocs;
extern struct options opt;

/* coll_bench_io.c */
void emit_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void check_mpi(int rc, const char *what);
void harness_request(const char *what);
int use_routes(enum impl which);
void use_routing_block(int rep);
double max_over_ranks(double t);
extern double *abuf_send, *abuf_recv, *abuf_ref;
extern unsigned char *bbuf;
void alloc_buffers(void);
void emit_sample(const char *coll, enum impl which, long bytes, int root, int rep, double t);
void emit_settle(const char *coll, const char *impl, long bytes, int call, double t);
void idle_pause(long ms);
typedef int (*call_fn)(enum impl which, void *ctx); /* one collective call; returns its MPI code */
double timed_settled(enum impl which, const char *coll, const char *label, long bytes, call_fn fn,
                     void *ctx);

void sdn_init(void); /* SDN_MPI_Init, timed (slowest rank) */

/* coll_bench_algs.c: the --sdn-algs entries */
struct alg {
    const char *name;
    int path, depth;                /* libsdnmpi's path (sdnmpi_testing.h), the hierarchical depth */
    size_t segment;                 /* ... and segment bytes (0: the library's) */
};
int alg_index(const char *name);    /* the entry's index, -1 if none */
const struct alg *alg_entry(int a); /* entry a (an index alg_index gave) */
void force_alg(int a);              /* forces entry a, or the library's rule for a < 0 */
const char *alg_name(int path);     /* the first entry's name for a path, "?" if none */
int sdnmpi_test_last_path(void);    /* libsdnmpi's test hook: the path its last allreduce took */

/* coll_bench_more.c */
void run_more(void);

/* coll_bench_startup.c */
void run_startup(void);

#endif
