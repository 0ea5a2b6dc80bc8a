/* An MPI job for the integration tests: SDN_MPI_Allreduce of BYTES bytes of doubles, REPS times,
 * each result checked exactly (the values are integers, so every summation order is exact).
 * Rank 0 then creates HOLD_DIR/ready and waits for HOLD_DIR/go (so the test can inspect the
 * installed routes while the job is alive) before SDN_MPI_Finalize releases the job.
 * Usage: allreduce_job BYTES REPS HOLD_DIR */
#include <sdnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "holdfile.h"

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s BYTES REPS HOLD_DIR\n", argv[0]); return 2; }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS || SDN_MPI_Init() != MPI_SUCCESS) return 1;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = atol(argv[1]) / (long)sizeof(double);
    int reps = atoi(argv[2]);
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    for (long i = 0; i < n; i++) a[i] = (double)(rank * 1000 + i % 1000);
    int bad = 0;
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++) {
        if (SDN_MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) bad++;
        for (long i = 0; i < n; i++)
            if (b[i] != (double)size * (i % 1000) + 1000.0 * size * (size - 1) / 2) { bad++; break; }
    }
    double t = MPI_Wtime() - t0;
    int bad_total = 0;
    MPI_Allreduce(&bad, &bad_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (touch(argv[3], "ready") != 0) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int i = 0; i < 1200 && !exists(argv[3], "go"); i++) usleep(100000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    SDN_MPI_Finalize();
    if (rank == 0) printf("allreduce_job %s p=%d bytes=%ld reps=%d time=%.3f\n",
                          bad_total ? "WRONG" : "OK", size, n * (long)sizeof(double), reps, t);
    free(a);
    free(b);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
