/*
 * bcast_check.c -- compares SDN_MPI_Bcast with PMPI_Bcast (run by
 * tests/unit/test_libsdnmpi_bcast.py under mpirun).
 *
 * Every case fills the buffer (the root with seeded random bytes, every other rank with its own
 * garbage), makes a copy, runs SDN_MPI_Bcast on the buffer and PMPI_Bcast on the copy, and
 * requires the two to be byte-identical over the whole extent (so the gaps of a non-contiguous
 * datatype must be untouched too). Cases: sizes from 0 B to 16 MiB, roots 0, p-1 and p/2, on
 * MPI_COMM_WORLD, on an even/odd MPI_Comm_split (ranks in reverse order) and on an MPI_Comm_dup;
 * datatypes MPI_BYTE, MPI_INT, MPI_DOUBLE, a contiguous derived type, a vector with gaps, the root
 * using a different (but matching) type than the others, and a mix where only the root's type has
 * gaps (all ranks must agree to fall back).
 *
 * Options: --expect sdn|pmpi|any  which path eligible calls must take (default any): with sdn,
 *                                  large contiguous calls on communicators spanning several
 *                                  (fake) hosts must use multicast, all others PMPI_Bcast
 *          --quick                 fewer sizes (up to 1 MiB)
 *          --big                   add 16 MiB cases
 *          --seed N
 *          --repeat N              the world/root-0 4 MiB case N more times (cache, epochs)
 * Reads SDN_MPI_BCAST_MIN_BYTES (plain integer) and SDN_MPI_FAKE_HOSTS like the library.
 * Rank 0 prints "bcast_check: p=.. cases=.. failures=.. paths pmpi=.. mcast=.. mcast_pmpi=..
 * rounds=.. resent=.. finished=.."; the exit status is 1 if any check failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdnmpi.h"
#include "sdnmpi_testing.h"

enum expect { EXPECT_ANY, EXPECT_SDN, EXPECT_PMPI };

static enum expect expect = EXPECT_ANY;
static long min_bytes = 65536;
static int fake_hosts = 0;
static int world_rank, world_size;
static int cases, failures;
static int paths[4];
static long long total_rounds, total_resent, total_finished;

static uint64_t rng_state;

static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void fill(unsigned char *buf, size_t n, uint64_t seed)
{
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = next_rand();
        memcpy(buf + i, &v, 8);
    }
    for (; i < n; i++)
        buf[i] = (unsigned char)next_rand();
}

/* Whether the communicator spans more than one (fake) host: only then is a tree planned. */
static int spans_hosts(MPI_Comm comm)
{
    int p;
    MPI_Comm_size(comm, &p);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *ranks = malloc((size_t)p * sizeof *ranks), *world = malloc((size_t)p * sizeof *world);
    if (ranks == NULL || world == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < p; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(g, p, ranks, wg, world);
    int n = fake_hosts > 0 ? fake_hosts : 1, first = world[0] % n, many = 0;
    for (int i = 1; i < p; i++)
        many |= world[i] % n != first;
    free(ranks);
    free(world);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return many;
}

struct tcase {
    const char *what;
    MPI_Datatype root_type, other_type; /* each rank's datatype */
    int root_count, other_count;
    int contiguous_everywhere;          /* all ranks' types contiguous */
};

static void run_case(MPI_Comm comm, const char *cname, int root, size_t bytes, const struct tcase *tc,
                     uint64_t seed)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    MPI_Datatype type = rank == root ? tc->root_type : tc->other_type;
    int count = rank == root ? tc->root_count : tc->other_count;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    size_t span = count > 0 ? (size_t)extent * (size_t)count : 1;
    unsigned char *buf = malloc(span), *ref = malloc(span);
    if (buf == NULL || ref == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == root)
        fill(buf, span, seed);
    else
        fill(buf, span, seed ^ (0xdeadbeefull + (uint64_t)world_rank));
    memcpy(ref, buf, span);

    int rc = SDN_MPI_Bcast(buf, count, type, root, comm);
    int rounds = 0;
    long long resent = 0, finished = 0;
    int path = sdnmpi_test_last_bcast(&rounds, &resent, &finished);
    int rc2 = PMPI_Bcast(ref, count, type, root, comm);

    int bad = 0;
    if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: %s %s root=%d bytes=%zu: rc %d / %d\n", world_rank, cname, tc->what,
                root, bytes, rc, rc2);
        bad = 1;
    } else if (memcmp(buf, ref, span) != 0) {
        size_t i = 0;
        while (buf[i] == ref[i])
            i++;
        fprintf(stderr, "rank %d: %s %s root=%d bytes=%zu: differs from PMPI_Bcast at byte %zu "
                "(path %d rounds %d)\n", world_rank, cname, tc->what, root, bytes, i, path, rounds);
        bad = 1;
    }
    int eligible = p > 1 && bytes > 0 && (long)bytes >= min_bytes && tc->contiguous_everywhere
                   && spans_hosts(comm);
    if (expect != EXPECT_ANY) {
        int want_mcast = expect == EXPECT_SDN && eligible;
        int is_mcast = path == 2 || path == 3;
        if (path == 0 || is_mcast != want_mcast) {
            fprintf(stderr, "rank %d: %s %s root=%d bytes=%zu: path %d, expected %s\n", world_rank,
                    cname, tc->what, root, bytes, path, want_mcast ? "multicast" : "PMPI_Bcast");
            bad = 1;
        }
    }
    /* Paths are agreed: every rank must report the same. */
    int lo = path, hi = path;
    PMPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, comm);
    PMPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, comm);
    if (lo != hi) {
        fprintf(stderr, "rank %d: %s %s root=%d bytes=%zu: ranks disagree on the path (%d..%d)\n",
                world_rank, cname, tc->what, root, bytes, lo, hi);
        bad = 1;
    }
    cases++;
    failures += bad;
    if (path >= 0 && path < 4)
        paths[path]++;
    total_rounds += rounds;
    total_resent += resent;
    total_finished += finished;
    free(buf);
    free(ref);
}

/* Every datatype case for `bytes` on comm from root. */
static void run_sizes(MPI_Comm comm, const char *cname, int root, size_t bytes, uint64_t seed, int full)
{
    struct tcase tc;
    int ints = (int)(bytes / sizeof(int));
    /* MPI_BYTE */
    tc = (struct tcase){"byte", MPI_BYTE, MPI_BYTE, (int)bytes, (int)bytes, 1};
    run_case(comm, cname, root, bytes, &tc, seed);
    if (!full)
        return;
    /* MPI_INT / MPI_DOUBLE */
    tc = (struct tcase){"int", MPI_INT, MPI_INT, ints, ints, 1};
    run_case(comm, cname, root, (size_t)ints * sizeof(int), &tc, seed + 1);
    int dbl = (int)(bytes / sizeof(double));
    tc = (struct tcase){"double", MPI_DOUBLE, MPI_DOUBLE, dbl, dbl, 1};
    run_case(comm, cname, root, (size_t)dbl * sizeof(double), &tc, seed + 2);
    /* a contiguous derived type: 3 ints */
    MPI_Datatype three, vec;
    MPI_Type_contiguous(3, MPI_INT, &three);
    MPI_Type_commit(&three);
    int n3 = ints / 3;
    tc = (struct tcase){"contig3int", three, three, n3, n3, 1};
    run_case(comm, cname, root, (size_t)n3 * 12, &tc, seed + 3);
    /* the root sends n3 x (3 ints), the others receive 3 n3 ints */
    tc = (struct tcase){"contig3int/int", three, MPI_INT, n3, 3 * n3, 1};
    run_case(comm, cname, root, (size_t)n3 * 12, &tc, seed + 4);
    /* a vector with gaps: 2 ints of every 3 */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* int, gap, int: size 8, extent 12 */
    MPI_Type_commit(&vec);
    int nv = ints / 3;
    tc = (struct tcase){"vector", vec, vec, nv, nv, 0};
    run_case(comm, cname, root, (size_t)nv * 8, &tc, seed + 5);
    /* only the root's type has gaps: the others must agree to fall back with it */
    tc = (struct tcase){"vector/int", vec, MPI_INT, nv, 2 * nv, 0};
    run_case(comm, cname, root, (size_t)nv * 8, &tc, seed + 6);
    MPI_Type_free(&three);
    MPI_Type_free(&vec);
}

static void run_comm(MPI_Comm comm, const char *cname, int quick, int big, uint64_t seed)
{
    static const size_t quick_sizes[] = {0, 1, 1000, 65535, 65536, 100003, 1 << 20};
    static const size_t full_sizes[] = {0, 1, 1000, 65535, 65536, 100003, (1 << 20) + 7, 4 << 20};
    const size_t *sizes = quick ? quick_sizes : full_sizes;
    size_t nsizes = quick ? sizeof quick_sizes / sizeof *quick_sizes
                          : sizeof full_sizes / sizeof *full_sizes;
    int p;
    MPI_Comm_size(comm, &p);
    int roots[3] = {0, p - 1, p / 2}, nroots = 0, uniq[3];
    for (int i = 0; i < 3; i++) {
        int dup = 0;
        for (int j = 0; j < nroots; j++)
            dup |= uniq[j] == roots[i];
        if (!dup)
            uniq[nroots++] = roots[i];
    }
    for (int r = 0; r < nroots; r++)
        for (size_t i = 0; i < nsizes; i++)
            run_sizes(comm, cname, uniq[r], sizes[i], seed + 1000 * (uint64_t)r + 17 * i,
                      sizes[i] == 100003 || sizes[i] == 65536);
    if (big)
        for (int r = 0; r < nroots && r < 2; r++)
            run_sizes(comm, cname, uniq[r], 16 << 20, seed + 99 + (uint64_t)r, 0);
}

int main(int argc, char **argv)
{
    int quick = 0, big = 0, repeat = 0;
    uint64_t seed = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            i++;
            expect = !strcmp(argv[i], "sdn") ? EXPECT_SDN : !strcmp(argv[i], "pmpi") ? EXPECT_PMPI
                                                                                     : EXPECT_ANY;
        } else if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--big")) {
            big = 1;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else {
            if (world_rank == 0)
                fprintf(stderr, "bcast_check: unknown option %s\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    const char *v = getenv("SDN_MPI_BCAST_MIN_BYTES");
    if (v != NULL && v[0] != '\0')
        min_bytes = atol(v);
    v = getenv("SDN_MPI_FAKE_HOSTS");
    if (v != NULL && v[0] != '\0')
        fake_hosts = atoi(v);

    /* Before SDN_MPI_Init: PMPI_Bcast. */
    struct tcase tc = {"before-init", MPI_BYTE, MPI_BYTE, 1 << 17, 1 << 17, 1};
    int saved = expect;
    expect = EXPECT_PMPI;
    run_case(MPI_COMM_WORLD, "world", 0, 1 << 17, &tc, seed + 5555);
    expect = saved;

    if (SDN_MPI_Init() != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: SDN_MPI_Init failed\n", world_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    run_comm(MPI_COMM_WORLD, "world", quick, big, seed);

    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &half);
    run_comm(half, world_rank % 2 ? "odd" : "even", 1, 0, seed + 7);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_comm(dup, "dup", 1, 0, seed + 11);

    for (int k = 0; k < repeat; k++) {
        tc = (struct tcase){"repeat", MPI_BYTE, MPI_BYTE, 4 << 20, 4 << 20, 1};
        run_case(MPI_COMM_WORLD, "world", 0, 4 << 20, &tc, seed + 300 + (uint64_t)k);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);

    if (SDN_MPI_Finalize() != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: SDN_MPI_Finalize failed\n", world_rank);
        failures++;
    }
    /* After SDN_MPI_Finalize: PMPI_Bcast again. */
    tc = (struct tcase){"after-finalize", MPI_BYTE, MPI_BYTE, 1 << 17, 1 << 17, 1};
    expect = expect == EXPECT_ANY ? EXPECT_ANY : EXPECT_PMPI;
    run_case(MPI_COMM_WORLD, "world", 0, 1 << 17, &tc, seed + 6666);

    int total_failures = 0;
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("bcast_check: p=%d cases=%d failures=%d paths pmpi=%d mcast=%d mcast_pmpi=%d "
               "rounds=%lld resent=%lld finished=%lld\n",
               world_size, cases, total_failures, paths[1], paths[2], paths[3], total_rounds,
               total_resent, total_finished);
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
