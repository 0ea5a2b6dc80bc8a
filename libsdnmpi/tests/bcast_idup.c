/* bcast_idup.c -- Bcast states made while an MPI_Comm_idup of their own communicator is pending
 * (run by tests/unit/test_libsdnmpi_bcast_idup.py under mpirun). Built twice: `bcast_idup` links
 * libsdnmpi.a and calls SDN_MPI_Init / SDN_MPI_Bcast / SDN_MPI_Finalize (SDNMPI_LINKED);
 * `plain_bcast_idup` is an unmodified MPI program calling MPI_Bcast, for LD_PRELOAD.
 *
 *   bcast_idup [--rounds N] [--bytes B] [--no-idup] [--world-idup]
 *
 * The world first: its first Bcast (root p - 1) while an MPI_Comm_idup of MPI_COMM_WORLD is
 * pending (--world-idup), or before that idup is started (the default: a linked application with
 * SDN_MPI_LIB_COMM=defer must make its first SDN collective before any creation of its own on the
 * world); then the idup'ed world's first Bcast (root 0). Then N rounds (default 8), each making a
 * communicator with the MPI library's own MPI_Comm_dup of the world (even rounds) or
 * MPI_Comm_split (odd rounds, ranks in reverse order), starting an MPI_Comm_idup of it, running
 * its first Bcast (root r mod p: its Bcast state and private communicator) while the idup is
 * pending, waiting, then the idup'ed communicator's first Bcast (root p - 1 - r mod p).
 * --no-idup: blocking MPI_Comm_dup in place of every idup, made after the first Bcast (for the
 * duplicate fallback, which Open MPI 4.1.4 may hang against a pending idup).
 *
 * Every call's B bytes (default 256 KiB) are compared with PMPI_Bcast's on a copy, bit for bit.
 * World rank 0 prints:
 *   bcast_idup: p=P rounds=N idup=I cases=C failures=F mcast=M
 * C calls, F of them differing from PMPI_Bcast (or failing) on some rank; M, linked only, the
 * least over the ranks of the calls that took the multicast path (-1 in plain_bcast_idup). The
 * exit status is 1 if any call failed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SDNMPI_LINKED
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#define BCAST SDN_MPI_Bcast
#else
#define BCAST MPI_Bcast
#endif

static int world_rank, cases, failures, mcast;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "bcast_idup[%d]: %s failed (%d)\n", world_rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void fill(unsigned char *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char)(x >> 24);
    }
}

/* One Bcast of `bytes` from root on comm, compared with PMPI_Bcast's on a copy. */
static void one_call(MPI_Comm comm, int root, size_t bytes, uint64_t seed)
{
    int rank = 0;
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    unsigned char *buf = malloc(bytes), *ref = malloc(bytes);
    if (buf == NULL || ref == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fill(buf, bytes, rank == root ? seed : seed ^ (0xdeadbeefull + (uint64_t)world_rank));
    memcpy(ref, buf, bytes);
    int rc = BCAST(buf, (int)bytes, MPI_BYTE, root, comm);
#ifdef SDNMPI_LINKED
    int path = sdnmpi_test_last_bcast(NULL, NULL, NULL);
    mcast += path == 2 || path == 3;
#endif
    check(PMPI_Bcast(ref, (int)bytes, MPI_BYTE, root, comm), "PMPI_Bcast");
    if (rc != MPI_SUCCESS || memcmp(buf, ref, bytes) != 0) {
        fprintf(stderr, "bcast_idup[%d]: root=%d seed=%llu: rc %d, %s PMPI_Bcast's\n", world_rank,
                root, (unsigned long long)seed, rc, rc == MPI_SUCCESS ? "differs from" : "not");
        failures++;
    }
    cases++;
    free(buf);
    free(ref);
}

/* comm's first Bcast from root_first while an idup of comm is pending (idup), or before its dup;
 * then the copy's first Bcast from root_copy. */
static void under_idup(MPI_Comm comm, int idup, int root_first, int root_copy, size_t bytes,
                       uint64_t seed)
{
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    if (idup)
        check(MPI_Comm_idup(comm, &copy, &req), "MPI_Comm_idup");
    one_call(comm, root_first, bytes, seed);
    if (idup)
        check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    else
        check(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
    one_call(copy, root_copy, bytes, seed + 1);
    check(MPI_Comm_free(&copy), "MPI_Comm_free");
}

int main(int argc, char **argv)
{
    int rounds = 8, idup = 1, world_idup = 0, p = 0;
    size_t bytes = 256 << 10;
    MPI_Init(&argc, &argv);
    check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &p), "MPI_Comm_size");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            bytes = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "--no-idup")) {
            idup = 0;
        } else if (!strcmp(argv[i], "--world-idup")) {
            world_idup = 1;
        } else {
            if (world_rank == 0)
                fprintf(stderr, "bcast_idup: unknown option %s\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (bytes < 1 || bytes > (size_t)1 << 30)
        MPI_Abort(MPI_COMM_WORLD, 2);
#ifdef SDNMPI_LINKED
    check(SDN_MPI_Init(), "SDN_MPI_Init");
#endif
    if (!world_idup)
        one_call(MPI_COMM_WORLD, p - 1, bytes, 7);
    under_idup(MPI_COMM_WORLD, idup, world_idup ? p - 1 : p / 2, 0, bytes, 11);
    for (int r = 0; r < rounds; r++) {
        MPI_Comm comm = MPI_COMM_NULL;
        if (r % 2 == 0)
            check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
        else
            check(MPI_Comm_split(MPI_COMM_WORLD, 0, p - world_rank, &comm), "MPI_Comm_split");
        under_idup(comm, idup, r % p, p - 1 - r % p, bytes, 100 + 2 * (uint64_t)r);
        check(MPI_Comm_free(&comm), "MPI_Comm_free");
    }
#ifdef SDNMPI_LINKED
    check(SDN_MPI_Finalize(), "SDN_MPI_Finalize");
#else
    mcast = -1;
#endif
    int mine[2] = {failures, -mcast}, all[2] = {0, 0};
    check(PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "PMPI_Allreduce");
    if (world_rank == 0)
        printf("bcast_idup: p=%d rounds=%d idup=%d cases=%d failures=%d mcast=%d\n", p, rounds, idup,
               cases, all[0], -all[1]);
    MPI_Finalize();
    return all[0] ? 1 : 0;
}
