/* traffic_check.c -- the linked API of traffic-aware job routing (tests/unit/test_libsdnmpi_traffic.py):
 * SDN_MPI_Flow_hint(s) and SDN_MPI_Phase return codes, and peers named by their rank in a
 * sub-communicator (world ranks in reversed order). Each rank enters phase 5, hints 1000 + r
 * bytes to its next rank in the reversed communicator (world rank r - 1 mod p), leaves the phase.
 * Prints "traffic_check: ok" on rank 0 if every return code was the expected one, else exits 1. */
#include <mpi.h>
#include <stdio.h>

#include "sdnmpi.h"

static int failed;

static void expect(int got, int want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "traffic_check: %s returned %d, expected %d\n", what, got, want);
        failed = 1;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    expect(SDN_MPI_Init(), MPI_SUCCESS, "SDN_MPI_Init");

    int peers[2] = {0, size};
    long long bytes[2] = {1, 1};
    expect(SDN_MPI_Flow_hint(MPI_COMM_WORLD, size, 10), MPI_ERR_RANK, "a peer out of range");
    expect(SDN_MPI_Flow_hint(MPI_COMM_WORLD, -1, 10), MPI_ERR_RANK, "a negative peer");
    expect(SDN_MPI_Flow_hints(MPI_COMM_WORLD, 2, peers, bytes), MPI_ERR_RANK, "one peer of two out of range");
    expect(SDN_MPI_Flow_hint(MPI_COMM_WORLD, 0, 0), MPI_ERR_ARG, "0 bytes");
    expect(SDN_MPI_Flow_hints(MPI_COMM_WORLD, -1, peers, bytes), MPI_ERR_ARG, "n < 0");
    expect(SDN_MPI_Flow_hints(MPI_COMM_WORLD, 1, NULL, bytes), MPI_ERR_ARG, "NULL peers");
    expect(SDN_MPI_Flow_hint(MPI_COMM_NULL, 0, 10), MPI_ERR_COMM, "MPI_COMM_NULL");
    expect(SDN_MPI_Flow_hints(MPI_COMM_WORLD, 0, NULL, NULL), MPI_SUCCESS, "no hints");
    expect(SDN_MPI_Phase(65), MPI_ERR_ARG, "phase 65");
    expect(SDN_MPI_Phase(-1), MPI_ERR_ARG, "phase -1");

    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    int c;
    MPI_Comm_rank(rev, &c);
    expect(SDN_MPI_Phase(5), MPI_SUCCESS, "SDN_MPI_Phase(5)");
    expect(SDN_MPI_Flow_hint(rev, (c + 1) % size, 1000 + rank), MPI_SUCCESS, "the hint");
    expect(SDN_MPI_Flow_hint(rev, c, 77), MPI_SUCCESS, "a hint to itself (nothing sent)");
    expect(SDN_MPI_Phase(0), MPI_SUCCESS, "SDN_MPI_Phase(0)");
    MPI_Comm_free(&rev);

    expect(SDN_MPI_Finalize(), MPI_SUCCESS, "SDN_MPI_Finalize");
    expect(SDN_MPI_Flow_hint(MPI_COMM_WORLD, 0, 10), MPI_SUCCESS, "a hint after SDN_MPI_Finalize");
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("traffic_check: ok\n");
    MPI_Finalize();
    return any ? 1 : 0;
}
