/* An MPI job for the fault tests: SDN_MPI_Allreduce and SDN_MPI_Bcast of BYTES bytes, repeated,
 * every result checked exactly. Phase 1 repeats both on MPI_COMM_WORLD until the test creates
 * DIR/fault (rank 0 creates DIR/running after the first round), then runs AFTER more rounds.
 * Phase 2 duplicates the communicator (a fresh plan and tree from the controller), runs AFTER
 * rounds on it, creates DIR/ready and waits for DIR/go before SDN_MPI_Finalize.
 * Usage: fault_job BYTES AFTER DIR */
#include <sdnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "holdfile.h"

#define MAX_ROUNDS 100000

/* One allreduce and one bcast (root r % size) on comm; the number of wrong results. */
static int round_on(MPI_Comm comm, int r, double *a, double *b, long n) {
    int rank, size, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (long i = 0; i < n; i++) a[i] = (double)(rank * 1000 + (i + r) % 1000);
    if (SDN_MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) bad++;
    for (long i = 0; i < n; i++)
        if (b[i] != (double)size * ((i + r) % 1000) + 1000.0 * size * (size - 1) / 2) { bad++; break; }
    int root = r % size;
    for (long i = 0; i < n; i++) b[i] = rank == root ? (double)(root * 7 + i + r) : -1.0;
    if (SDN_MPI_Bcast(b, (int)n, MPI_DOUBLE, root, comm) != MPI_SUCCESS) bad++;
    for (long i = 0; i < n; i++)
        if (b[i] != (double)(root * 7 + i + r)) { bad++; break; }
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s BYTES AFTER DIR\n", argv[0]); return 2; }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS || SDN_MPI_Init() != MPI_SUCCESS) return 1;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = atol(argv[1]) / (long)sizeof(double);
    int after = atoi(argv[2]);
    const char *dir = argv[3];
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b || n < 1 || after < 1) MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0, r = 0, left = -1;
    for (; r < MAX_ROUNDS && left != 0; r++) {
        bad += round_on(MPI_COMM_WORLD, r, a, b, n);
        int fault = 0;
        if (rank == 0) {
            if (r == 0 && touch(dir, "running") != 0) MPI_Abort(MPI_COMM_WORLD, 1);
            fault = exists(dir, "fault");
        }
        MPI_Bcast(&fault, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (left < 0 && fault) left = after;
        if (left > 0) left--;
    }
    MPI_Comm dup;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &dup) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < after; i++) bad += round_on(dup, r + i, a, b, n);
    int bad_total = 0;
    MPI_Allreduce(&bad, &bad_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (touch(dir, "ready") != 0) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int i = 0; i < 1200 && !exists(dir, "go"); i++) usleep(100000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&dup);
    SDN_MPI_Finalize();
    if (rank == 0) printf("fault_job %s rounds=%d\n", bad_total ? "WRONG" : "OK", r + after);
    free(a);
    free(b);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
