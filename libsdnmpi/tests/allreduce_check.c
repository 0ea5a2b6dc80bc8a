/*
 * allreduce_check.c -- compares SDN_MPI_Allreduce with PMPI_Allreduce (run by
 * tests/unit/test_libsdnmpi.py under mpirun).
 *
 * For every predefined op and every datatype it is defined for, several counts (0, 1, 7, a few
 * hundred, more than the Rabenseifner threshold), seeded random data, on MPI_COMM_WORLD, with and
 * without MPI_IN_PLACE; a smaller matrix on MPI_Comm_split (even/odd) and MPI_Comm_dup; an
 * intercommunicator, a derived datatype, user-defined ops (must fall back).
 *
 * Rules: integer, MIN/MAX, logical, bitwise, MINLOC/MAXLOC results are bit-identical to
 * PMPI_Allreduce's; floating SUM/PROD results are bit-identical on all ranks and within a few ulps
 * x log2(p) (relative) of PMPI_Allreduce's; whenever the call fell back, the result equals
 * PMPI_Allreduce's exactly. MPI_IN_PLACE gives the same bits as a separate receive buffer.
 *
 * Options: --expect sdn|pmpi|any  which path eligible calls must take (default any)
 *          --quick                 fewer datatypes and counts
 *          --seed N
 *          --calls-per-comm N      extra SDN calls per communicator (cache test), default 0
 *          --force-hier            the hierarchical algorithm wherever the leaf layout allows it,
 *                                  whatever the size and the selection rule (test hook)
 *          --force-rd              recursive doubling for every eligible call, below
 *                                  SDN_MPI_MIN_BYTES (or its default) too (test hook)
 *          --force-pmpi            PMPI_Allreduce for every call (test hook)
 * Knobs read like the library: SDN_MPI_RABENSEIFNER_MIN, SDN_MPI_MIN_BYTES (unset: the
 * library's SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES), SDN_MPI_MAX_BYTES (plain integers here).
 * Rank 0 prints "allreduce_check: ... failures=N ..."; the exit status is 1 if any check failed.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce_check.h"
#include "check_common.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "env.h" /* the knobs' defaults */

#define NTYPES check_ntypes

struct odesc {
    const char *name;
    MPI_Op op;
};
static struct odesc ops[] = {
    {"SUM", MPI_SUM}, {"PROD", MPI_PROD}, {"MIN", MPI_MIN}, {"MAX", MPI_MAX},
    {"LAND", MPI_LAND}, {"LOR", MPI_LOR}, {"LXOR", MPI_LXOR}, {"BAND", MPI_BAND},
    {"BOR", MPI_BOR}, {"BXOR", MPI_BXOR}, {"MINLOC", MPI_MINLOC}, {"MAXLOC", MPI_MAXLOC},
};
#define NOPS (sizeof ops / sizeof ops[0])

/* ---- the run ------------------------------------------------------------------------------ */

enum expect { EXPECT_ANY, EXPECT_SDN, EXPECT_PMPI };
const char *const path_names[] = {"none", "pmpi", "rd", "rabenseifner", "empty", "hier"};

static enum expect expect_mode = EXPECT_ANY;
static int world_rank, world_size;
long long cases;
long long path_count[6];
static uint64_t rab_min = SDNMPI_DEFAULT_RAB_MIN, min_bytes = SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES;
static uint64_t max_bytes = UINT64_MAX;
static uint64_t hier_min = SDNMPI_DEFAULT_HIER_MIN;
static int quick;
static uint64_t seed = 1;
static int calls_per_comm;
static int force_hier;
static int forced; /* the path forced by the test hook (1 pmpi, 2 rd, 5 hier), 0 none */

/* The path SDN_MPI_Allreduce must take; -1 when any is fine. */
static int expected_path(int eligible, int count, int type_size, int comm_size)
{
    if (expect_mode == EXPECT_ANY)
        return -1;
    if (expect_mode == EXPECT_PMPI || !eligible || forced == 1)
        return 1;
    uint64_t bytes = (uint64_t)count * (uint64_t)type_size;
    if ((!forced && bytes < min_bytes) || bytes > max_bytes) /* a forced path: any size */
        return 1;
    if (count == 0)
        return 4;
    if (forced == 2)
        return 2;
    int pof2 = 1;
    while (pof2 * 2 <= comm_size)
        pof2 *= 2;
    if (comm_size > 1 && bytes >= rab_min && count >= pof2)
        return 3;
    return 2;
}

/* One case: SDN vs PMPI on comm (an intracommunicator). */
static void run_case(MPI_Comm comm, const char *cname, const struct tdesc *t, const struct odesc *o,
                     int count, int in_place)
{
    int rank, p, type_size;
    MPI_Aint lb, extent;
    check_mpi(MPI_Comm_rank(comm, &rank), "rank");
    check_mpi(MPI_Comm_size(comm, &p), "size");
    check_mpi(MPI_Type_size(t->dt, &type_size), "type size");
    check_mpi(MPI_Type_get_extent(t->dt, &lb, &extent), "extent");
    size_t bytes = (size_t)count * (size_t)extent;
    char *send = xmalloc(bytes), *sdn = xmalloc(bytes), *ref = xmalloc(bytes), *ip = xmalloc(bytes);
    char *root = xmalloc(bytes);
    cases++;
    seed_rng(seed + cases * 7919, (uint64_t)world_rank, (uint64_t)count);
    gen(t, o->op, send, count, extent, rank, p);
    check_sum_in_range(t, o->op, send, count, extent, comm);
    memset(sdn, 0, bytes);
    memset(ref, 0, bytes);

    check_mpi(SDN_MPI_Allreduce(send, sdn, count, t->dt, o->op, comm), "SDN_MPI_Allreduce");
    int path = sdnmpi_test_last_path();
    check_mpi(PMPI_Allreduce(send, ref, count, t->dt, o->op, comm), "PMPI_Allreduce");
    path_count[path]++;
    int want = expected_path(1, count, type_size, p);
    /* The hierarchical algorithm replaces either from SDN_MPI_HIER_MIN on when the communicator's
     * leaf layout fits (which this program does not know; the tests count the paths). */
    if (want >= 2 && want != 4 && path == 5
        && (force_hier || (uint64_t)count * (uint64_t)type_size >= hier_min))
        want = 5;
    if (want >= 0 && path != want)
        FAIL("%s %s %s count=%d p=%d: path %s, expected %s", cname, o->name, t->name, count, p,
             path_names[path], path_names[want]);

    int exact = path == 1 || path == 4 || !((is_real(t->kind) || is_cplx(t->kind))
                                           && (o->op == MPI_SUM || o->op == MPI_PROD));
    for (int e = 0; e < count; e++) {
        const char *a = sdn + (size_t)e * (size_t)extent, *b = ref + (size_t)e * (size_t)extent;
        if (exact ? !same_bits(t, a, b) : !close_enough(t, a, b, p)) {
            FAIL("%s %s %s count=%d p=%d path=%s: element %d differs from PMPI_Allreduce",
                 cname, o->name, t->name, count, p, path_names[path], e);
            break;
        }
    }
    /* Bit-identical on every rank: compare with rank 0's. */
    memcpy(root, sdn, bytes);
    if (bytes > 0)
        check_mpi(PMPI_Bcast(root, (int)bytes, MPI_BYTE, 0, comm), "bcast");
    for (int e = 0; e < count; e++) {
        if (!same_bits(t, sdn + (size_t)e * (size_t)extent, root + (size_t)e * (size_t)extent)) {
            FAIL("%s %s %s count=%d p=%d path=%s: element %d differs from rank 0's", cname,
                 o->name, t->name, count, p, path_names[path], e);
            break;
        }
    }
    if (in_place) {
        memcpy(ip, send, bytes);
        check_mpi(SDN_MPI_Allreduce(MPI_IN_PLACE, ip, count, t->dt, o->op, comm), "in place");
        int ipath = sdnmpi_test_last_path();
        if (ipath != path)
            FAIL("%s %s %s count=%d: MPI_IN_PLACE took path %s, not %s", cname, o->name, t->name,
                 count, path_names[ipath], path_names[path]);
        for (int e = 0; e < count; e++) {
            if (!same_bits(t, ip + (size_t)e * (size_t)extent, sdn + (size_t)e * (size_t)extent)) {
                FAIL("%s %s %s count=%d p=%d: MPI_IN_PLACE element %d differs", cname, o->name,
                     t->name, count, p, e);
                break;
            }
        }
    }
    free(send), free(sdn), free(ref), free(ip), free(root);
}

static int big_count(const struct tdesc *t)
{
    int type_size;
    check_mpi(MPI_Type_size(t->dt, &type_size), "type size");
    uint64_t threshold = rab_min < 65536 ? 65536 : rab_min;
    if (threshold > (1u << 22))
        threshold = 65536;
    return (int)(threshold / (uint64_t)type_size) + 13;
}

static int in_list(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(name, *list))
            return 1;
    return 0;
}

/* Every op x datatype x count on comm. `small`: the reduced matrix of sub-communicators. */
static void run_matrix(MPI_Comm comm, const char *cname, int small, int in_place)
{
    static const char *const quick_types[] = {
        "signed char", "unsigned short", "int", "unsigned long", "int64_t", "uint8_t", "float",
        "double", "long double", "double complex", "long double complex", "bool", "byte",
        "double_int", "short_int", "long_double_int", NULL};
    static const char *const small_types[] = {"int", "uint16_t", "double", "float complex", "bool",
                                              "byte", "2int", "double_int", NULL};
    for (size_t ti = 0; ti < NTYPES; ti++) {
        const struct tdesc *t = &check_types[ti];
        if (small && !in_list(t->name, small_types))
            continue;
        if (quick && !small && !in_list(t->name, quick_types))
            continue;
        int counts[] = {0, 1, 7, 301, big_count(t)};
        for (size_t oi = 0; oi < NOPS; oi++) {
            const struct odesc *o = &ops[oi];
            if (!defined_for(o->op, t->kind))
                continue;
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                if ((quick || small) && (counts[ci] == 1))
                    continue;
                run_case(comm, cname, t, o, counts[ci], in_place);
            }
        }
    }
}

/* Extra calls on a communicator whose plan is cached. */
static void repeat_calls(MPI_Comm comm)
{
    for (int i = 0; i < calls_per_comm; i++) {
        double v = 1.0, r = 0.0;
        check_mpi(SDN_MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm), "repeat");
        int p;
        check_mpi(MPI_Comm_size(comm, &p), "size");
        if (r != (double)p)
            FAIL("repeat call: %g != %d", r, p);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            const char *m = argv[++i];
            expect_mode = !strcmp(m, "sdn") ? EXPECT_SDN : !strcmp(m, "pmpi") ? EXPECT_PMPI : EXPECT_ANY;
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--calls-per-comm") && i + 1 < argc) {
            calls_per_comm = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--force-hier")) {
            force_hier = 1;
            forced = 5;
        } else if (!strcmp(argv[i], "--force-rd")) {
            forced = 2;
        } else if (!strcmp(argv[i], "--force-pmpi")) {
            forced = 1;
        } else {
            fprintf(stderr, "usage: allreduce_check [--expect sdn|pmpi|any] [--quick] [--seed N]"
                            " [--calls-per-comm N] [--force-hier|--force-rd|--force-pmpi]\n");
            return 2;
        }
    }
    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "rank");
    check_prog = "allreduce_check";
    check_rank = world_rank;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &world_size), "size");
    rab_min = env_u64("SDN_MPI_RABENSEIFNER_MIN", SDNMPI_DEFAULT_RAB_MIN);
    min_bytes = env_u64("SDN_MPI_MIN_BYTES", SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES);
    max_bytes = env_u64("SDN_MPI_MAX_BYTES", UINT64_MAX);
    hier_min = env_u64("SDN_MPI_HIER_MIN", SDNMPI_DEFAULT_HIER_MIN);

    /* A call before SDN_MPI_Init falls back. */
    {
        int v = world_rank, a = -1, b = -2;
        check_mpi(SDN_MPI_Allreduce(&v, &a, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "pre-init");
        if (sdnmpi_test_last_path() != 1)
            FAIL("call before SDN_MPI_Init did not fall back");
        check_mpi(PMPI_Allreduce(&v, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "pre-init");
        if (a != b)
            FAIL("call before SDN_MPI_Init: %d != %d", a, b);
    }
    check_mpi(SDN_MPI_Init(), "SDN_MPI_Init");
    if (SDN_MPI_Init() != MPI_ERR_OTHER)
        FAIL("second SDN_MPI_Init did not return MPI_ERR_OTHER");
    if (forced && sdnmpi_test_force_allreduce(forced) != 0)
        FAIL("sdnmpi_test_force_allreduce(%d) refused", forced);

    /* Extents the comparisons rely on. */
    for (size_t ti = 0; ti < NTYPES; ti++) {
        MPI_Aint lb, extent;
        check_mpi(MPI_Type_get_extent(check_types[ti].dt, &lb, &extent), "extent");
        if (lb != 0 || (size_t)extent != check_types[ti].size)
            FAIL("%s: MPI extent %ld, C size %zu", check_types[ti].name, (long)extent, check_types[ti].size);
    }

    run_matrix(MPI_COMM_WORLD, "world", 0, 1);
    repeat_calls(MPI_COMM_WORLD);
    run_fallbacks(seed, world_rank);

    MPI_Comm half, dup;
    int color = world_rank % 2;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &half), "split");
    run_matrix(half, color ? "odd" : "even", 1, 1);
    repeat_calls(half);
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "dup");
    run_matrix(dup, "dup", 1, 0);
    repeat_calls(dup);

    if (world_size >= 2) {
        MPI_Comm inter;
        check_mpi(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter),
                  "intercomm");
        int v[3] = {world_rank, 2 * world_rank, 3};
        fallback_case(inter, "intercommunicator", v, 3, MPI_INT, MPI_SUM, sizeof v);
        check_mpi(MPI_Comm_free(&inter), "free inter");
    }
    check_mpi(MPI_Comm_free(&dup), "free dup");
    check_mpi(MPI_Comm_free(&half), "free half");

    check_mpi(SDN_MPI_Finalize(), "SDN_MPI_Finalize");
    if (SDN_MPI_Finalize() != MPI_ERR_OTHER)
        FAIL("second SDN_MPI_Finalize did not return MPI_ERR_OTHER");
    {
        int v = 1, r = 0;
        check_mpi(SDN_MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "post-finalize");
        if (sdnmpi_test_last_path() != 1 || r != world_size)
            FAIL("call after SDN_MPI_Finalize did not fall back correctly");
    }

    long long total = 0;
    check_mpi(PMPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "sum");
    if (world_rank == 0)
        printf("allreduce_check: p=%d cases=%lld failures=%lld paths pmpi=%lld rd=%lld "
               "rabenseifner=%lld empty=%lld hier=%lld\n",
               world_size, cases, total, path_count[1], path_count[2], path_count[3],
               path_count[4], path_count[5]);
    fflush(stdout);
    MPI_Finalize();
    return total ? 1 : 0;
}
