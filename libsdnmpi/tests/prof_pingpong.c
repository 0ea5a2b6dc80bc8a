/* prof_pingpong.c -- point-to-point latency and bandwidth between ranks 0 and 1, for the profiler's
 * overhead benchmark (bench/prof_overhead.py). A plain MPI program.
 * Usage: prof_pingpong MIN_BYTES MAX_BYTES SECONDS_PER_SIZE
 * Rank 0 prints one line per size (doubling from MIN to MAX):
 *   <bytes> <one-way latency us> <bandwidth MB/s>
 * latency: half the round trip of the fastest batch of 20 ping-pongs; bandwidth: the fastest
 * window of 16 back-to-back nonblocking sends acknowledged by one zero-byte message. Fastest, not
 * mean: on a shared machine, preemption only ever adds time, and the best case is what shows a
 * library's own cost. Each half of SECONDS_PER_SIZE goes to one of the two. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 16
#define BATCH 20

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 4 || p < 2) {
        if (r == 0)
            fprintf(stderr, "usage: mpirun -np 2 prof_pingpong MIN_BYTES MAX_BYTES SECONDS_PER_SIZE\n");
        MPI_Finalize();
        return 2;
    }
    long lo = atol(argv[1]), hi = atol(argv[2]);
    double secs = atof(argv[3]);
    char *buf = malloc((size_t)hi * WINDOW + 1);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 1, (size_t)hi * WINDOW + 1);
    MPI_Request reqs[WINDOW];
    MPI_Status stats[WINDOW];
    for (long b = lo; b <= hi; b *= 2) {
        int n = (int)b, go = 1;
        /* latency: batches of BATCH round trips until `secs` / 2 have passed; the fastest batch */
        double best_lat = 1e30, t0;
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        while (go) {
            if (r == 0) {
                t0 = MPI_Wtime();
                for (int i = 0; i < BATCH; i++) {
                    MPI_Send(buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
                double t = (MPI_Wtime() - t0) / BATCH / 2;
                best_lat = t < best_lat ? t : best_lat;
                go = MPI_Wtime() - start < secs / 2;
                MPI_Send(&go, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
            } else if (r == 1) {
                for (int i = 0; i < BATCH; i++) {
                    MPI_Recv(buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                }
                MPI_Recv(&go, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                go = 0;
            }
        }
        /* bandwidth: windows of WINDOW sends acknowledged by a 0-byte message; the fastest window */
        double best_win = 1e30;
        go = 1;
        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
        while (go) {
            if (r == 0) {
                t0 = MPI_Wtime();
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(buf + (size_t)w * b, n, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Recv(&go, 0, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t = MPI_Wtime() - t0;
                best_win = t < best_win ? t : best_win;
                go = MPI_Wtime() - start < secs / 2;
                MPI_Send(&go, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
            } else if (r == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(buf + (size_t)w * b, n, MPI_CHAR, 0, 3, MPI_COMM_WORLD, &reqs[w]);
                MPI_Waitall(WINDOW, reqs, stats);
                MPI_Send(&go, 0, MPI_INT, 0, 4, MPI_COMM_WORLD);
                MPI_Recv(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                go = 0;
            }
        }
        if (r == 0)
            printf("%ld %.6g %.6g\n", b, best_lat * 1e6, (double)b * WINDOW / best_win / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
