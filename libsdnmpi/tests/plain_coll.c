/*
 * plain_coll.c -- an ordinary MPI program that knows nothing about sdnmpi (for the LD_PRELOAD test
 * of MPI_Allgather, MPI_Reduce and MPI_Alltoall, and as an unmodified workload). Each rank checks
 * its own results against the values they must have; rank 0 prints "plain_coll: ok" if all ranks
 * passed.
 *
 * Usage: plain_coll [ints]   (ints per block, default 16384: 64 KiB)
 * With PLAIN_COLL_HOLD=DIR in the environment, rank 0 creates DIR/ready after the collectives and
 * waits (up to 2 minutes) for DIR/go before MPI_Finalize, so a test can inspect the job's routes.
 */
#define _DEFAULT_SOURCE /* usleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
    const char *hold = getenv("PLAIN_COLL_HOLD");
    if (hold != NULL && rank == 0) {
        char ready[4096], go[4096];
        if (snprintf(ready, sizeof ready, "%s/ready", hold) >= (int)sizeof ready
            || snprintf(go, sizeof go, "%s/go", hold) >= (int)sizeof go)
            MPI_Abort(MPI_COMM_WORLD, 2);
        FILE *f = fopen(ready, "w");
        if (f == NULL || fclose(f) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int i = 0; i < 1200 && access(go, F_OK) != 0; i++)
            usleep(100000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(all_bad ? "plain_coll: %d wrong elements\n" : "plain_coll: ok\n", all_bad);
    free(send);
    free(recv);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
