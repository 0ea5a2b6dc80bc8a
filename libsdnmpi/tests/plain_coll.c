/*
 * plain_coll.c -- an ordinary MPI program that knows nothing about sdnmpi (for the LD_PRELOAD test
 * of MPI_Allgather, MPI_Reduce and MPI_Alltoall, and as an unmodified workload). Each rank checks
 * its own results against the values they must have; rank 0 prints "plain_coll: ok" if all ranks
 * passed.
 *
 * Usage: plain_coll [ints]   (ints per block, default 16384: 64 KiB)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "plain_coll: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int main(int argc, char **argv)
{
    int rank, p, n = argc > 1 ? atoi(argv[1]) : 16384, bad = 0, all_bad = 0;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int *send = malloc((size_t)n * (size_t)p * sizeof(int));
    int *recv = malloc((size_t)n * (size_t)p * sizeof(int));
    if (n < 1 || send == NULL || recv == NULL) {
        fprintf(stderr, "plain_coll: bad size or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Allgather: block of rank r holds r * n + i */
    for (int i = 0; i < n; i++)
        send[i] = rank * n + i;
    check(MPI_Allgather(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    for (long i = 0; i < (long)n * p; i++)
        bad += recv[i] != (int)i;
    /* Reduce to the last rank: sum over ranks of (rank + i) */
    for (int i = 0; i < n; i++)
        send[i] = rank + i;
    check(MPI_Reduce(send, recv, n, MPI_INT, MPI_SUM, p - 1, MPI_COMM_WORLD), "MPI_Reduce");
    for (int i = 0; rank == p - 1 && i < n; i++)
        bad += recv[i] != p * (p - 1) / 2 + p * i;
    /* Alltoall: rank r sends r * 1000 + d to rank d, element i: + i * 7 */
    for (int d = 0; d < p; d++)
        for (int i = 0; i < n; i++)
            send[(size_t)d * (size_t)n + (size_t)i] = rank * 1000 + d + i * 7;
    check(MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
    for (int s = 0; s < p; s++)
        for (int i = 0; i < n; i++)
            bad += recv[(size_t)s * (size_t)n + (size_t)i] != s * 1000 + rank + i * 7;
    check(MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    if (rank == 0)
        printf(all_bad ? "plain_coll: %d wrong elements\n" : "plain_coll: ok\n", all_bad);
    free(send);
    free(recv);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
