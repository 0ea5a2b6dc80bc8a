/* An unmodified MPI program (no sdnmpi header): MPI_Allreduce of integers, checked exactly.
 * Run under LD_PRELOAD=libsdnmpi-preload.so it must behave the same. Usage: plain_allreduce_job N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < n; i++) a[i] = (long)rank * n + i;
    MPI_Allreduce(a, b, n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (b[i] != (long)n * size * (size - 1) / 2 + (long)i * size) bad = 1;
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("plain_allreduce_job %s p=%d n=%d\n", any ? "WRONG" : "OK", size, n);
    free(a);
    free(b);
    MPI_Finalize();
    return any;
}
