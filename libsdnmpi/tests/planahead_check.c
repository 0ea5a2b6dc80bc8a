/* planahead_check.c -- the world's plan requested at SDN_MPI_Init (libsdnmpi/src/plan_ahead.h),
 * for tests/unit/test_libsdnmpi_planahead.py.
 *
 *   planahead_check [--wait-file PATH] [--gap-ms N] [--count N] [--calls 0|2] [--comms 1-4]
 *                   [--hosts N] [--rounds N]
 *
 * SDN_MPI_Init; with --wait-file, world rank 0 waits (up to 60 s) until PATH exists (the stub
 * controller creates it when it receives plan_allreduce: the request arrived before any
 * collective); --gap-ms: every rank sleeps N ms (the application's work before its first
 * collective); then two SDN_MPI_Allreduce calls on MPI_COMM_WORLD (the first makes the plan, the
 * second uses it; --calls 0: none, straight to SDN_MPI_Finalize), each compared bit for bit with PMPI_Allreduce (int64 and double sums, MPI_MAX
 * of doubles). World rank 0 prints
 *   planahead_check: p=P first_path=A second_path=B ahead=X age=S request=S init=S failures=F
 * (paths as sdnmpi_test_last_path; ahead, age, request: the plan's timing slots plan_ahead,
 * plan_ahead_age, plan_request, -1 if not recorded; init: SDN_MPI_Init's seconds, slowest rank).
 * --comms 1: then the communicators of planahead_comms.c (their plans requested at creation);
 * --comms 2: those of planahead_kinds.c (--hosts: SDN_MPI_FAKE_HOSTS);
 * --comms 3: --rounds N (20) communicators planned while an idup of them is pending
 * (planahead_idup.c); --comms 4: the same without the idups.
 * Exit 1 on a mismatch. */
#include <errno.h>
#include <mpi.h>
#include <sdnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_common.h"
#include "planahead_check.h"
#include "sdnmpi_testing.h"

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* World rank 0: waits until `path` exists; 0, or -1 after 60 s. */
static int wait_file(const char *path)
{
    for (int i = 0; i < 60000; i++) {
        if (access(path, F_OK) == 0)
            return 0;
        sleep_ms(1);
    }
    return -1;
}

double slot(const char *name)
{
    const char *names[64];
    double values[64];
    size_t n = sdnmpi_test_timings(names, values, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (strcmp(names[i], name) == 0)
            return values[i];
    return -1.0;
}

int one_call(MPI_Comm comm, int count, uint64_t seed)
{
    int first = -1;
    int64_t *li = xmalloc((size_t)count * sizeof *li), *lo = xmalloc((size_t)count * sizeof *lo);
    int64_t *lp = xmalloc((size_t)count * sizeof *lp);
    double *di = xmalloc((size_t)count * sizeof *di), *dout = xmalloc((size_t)count * sizeof *dout);
    double *dp = xmalloc((size_t)count * sizeof *dp);
    uint64_t st = seed + (uint64_t)check_rank * 7919u;
    for (int i = 0; i < count; i++) {
        li[i] = (int64_t)(check_splitmix(&st) >> 8) - (INT64_C(1) << 54);
        di[i] = (double)(int64_t)(check_splitmix(&st) >> 40) / 8.0;
    }
    struct { MPI_Datatype dt; MPI_Op op; void *in, *out, *want; size_t size; const char *what; } cases[] = {
        {MPI_INT64_T, MPI_SUM, li, lo, lp, sizeof *li, "int64 sum"},
        {MPI_DOUBLE, MPI_SUM, di, dout, dp, sizeof *di, "double sum"},
        {MPI_DOUBLE, MPI_MAX, di, dout, dp, sizeof *di, "double max"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memset(cases[c].out, 0xa5, (size_t)count * cases[c].size);
        check_mpi(SDN_MPI_Allreduce(cases[c].in, cases[c].out, count, cases[c].dt, cases[c].op,
                                    comm), "SDN_MPI_Allreduce");
        int path = sdnmpi_test_last_path();
        if (first < 0)
            first = path;
        check_mpi(PMPI_Allreduce(cases[c].in, cases[c].want, count, cases[c].dt, cases[c].op,
                                 comm), "PMPI_Allreduce");
        if (memcmp(cases[c].out, cases[c].want, (size_t)count * cases[c].size) != 0)
            FAIL("%s of %d elements (path %d) differs from PMPI_Allreduce's", cases[c].what,
                 count, path);
    }
    free(li), free(lo), free(lp), free(di), free(dout), free(dp);
    return first;
}

int main(int argc, char **argv)
{
    const char *wait_path = NULL;
    long gap_ms = 0;
    int count = 64, calls = 2, comms = 0, hosts = 0, rounds = 20;
    check_prog = "planahead_check";
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int p = 0;
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &check_rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &p), "MPI_Comm_size");
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--wait-file") == 0)
            wait_path = argv[i + 1];
        else if (strcmp(argv[i], "--gap-ms") == 0)
            gap_ms = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--count") == 0)
            count = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--calls") == 0)
            calls = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--comms") == 0)
            comms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--hosts") == 0)
            hosts = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else
            FAIL("unknown option %s", argv[i]);
    }
    double t0 = MPI_Wtime();
    check_mpi(SDN_MPI_Init(), "SDN_MPI_Init");
    double init = MPI_Wtime() - t0, init_max = 0.0;
    check_mpi(PMPI_Allreduce(&init, &init_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
              "PMPI_Allreduce");
    if (wait_path != NULL && check_rank == 0 && wait_file(wait_path) != 0)
        FAIL("the controller saw no plan_allreduce within 60 s of SDN_MPI_Init");
    if (gap_ms > 0)
        sleep_ms(gap_ms);
    if (calls > 0)
        (void)one_call(MPI_COMM_WORLD, count, 1);
    int first = sdnmpi_test_last_path();
    double ahead = slot("plan_ahead"), age = slot("plan_ahead_age"), request = slot("plan_request");
    if (calls > 1)
        (void)one_call(MPI_COMM_WORLD, count, 2);
    int second = sdnmpi_test_last_path();
    if (comms == 1)
        comms_check(count, gap_ms);
    else if (comms == 2)
        kinds_check(count, gap_ms, hosts);
    else if (comms == 3 || comms == 4)
        idup_check(count, rounds, comms == 3);
    long long all = 0;
    check_mpi(PMPI_Allreduce(&failures, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD),
              "PMPI_Allreduce");
    if (check_rank == 0)
        printf("planahead_check: p=%d first_path=%d second_path=%d ahead=%g age=%.6f "
               "request=%.6f init=%.6f failures=%lld\n",
               p, first, second, ahead, age, request, init_max, all);
    check_mpi(SDN_MPI_Finalize(), "SDN_MPI_Finalize");
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return all != 0;
}
