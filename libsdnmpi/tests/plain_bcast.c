/*
 * plain_bcast.c -- an unmodified MPI program (no sdnmpi at all) that times and checks MPI_Bcast.
 * Run as is it measures the MPI library's own MPI_Bcast; under LD_PRELOAD=libsdnmpi-preload.so
 * the same binary uses SDN_MPI_Bcast.
 *
 *   plain_bcast [--split] [--hold DIR] BYTES:ROOT[xREPS] ...
 *
 * For every argument: REPS times (default 1), the root fills BYTES bytes with a pattern of
 * (BYTES, ROOT, rep), every other rank fills its buffer with its own garbage, MPI_Barrier, then
 * MPI_Bcast of MPI_BYTE (of MPI_INT when BYTES is a multiple of 4) from ROOT, timed, and every
 * rank checks every byte against the pattern. --split: on MPI_Comm_split(world, rank % 2) instead
 * (ROOT is then a rank of each half). Rank 0 prints one line per bcast:
 *   "bcast bytes=B root=R rep=K seconds=S errors=E"
 * and finally "plain_bcast OK" or "plain_bcast FAILED". The exit status is 1 on any error.
 * --hold DIR: before MPI_Finalize, rank 0 creates DIR/ready and every rank waits until DIR/go
 * exists (so that a test can look at the switches while the job still holds its routes).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void pattern(unsigned char *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x1234567ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (unsigned char)(x >> 24);
    }
}

int main(int argc, char **argv)
{
    int rank, wrank, p, errors_total = 0, split = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm comm = MPI_COMM_WORLD;
    int first = 1;
    const char *hold = NULL;
    for (;;) {
        if (first < argc && !strcmp(argv[first], "--split")) {
            split = 1;
            first++;
        } else if (first + 1 < argc && !strcmp(argv[first], "--hold")) {
            hold = argv[first + 1];
            first += 2;
        } else {
            break;
        }
    }
    if (split)
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    for (int a = first; a < argc; a++) {
        unsigned long bytes = 0;
        int root = 0, reps = 1;
        char *end = NULL;
        bytes = strtoul(argv[a], &end, 10);
        if (end == NULL || *end != ':') {
            if (wrank == 0)
                fprintf(stderr, "bad argument %s\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        root = (int)strtol(end + 1, &end, 10);
        if (*end == 'x')
            reps = atoi(end + 1);
        if (root < 0 || root >= p)
            root = p - 1;
        unsigned char *buf = malloc(bytes ? bytes : 1), *want = malloc(bytes ? bytes : 1);
        if (buf == NULL || want == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (int k = 0; k < reps; k++) {
            uint64_t seed = (uint64_t)bytes * 1000003u + (uint64_t)root * 101u + (uint64_t)k + 1;
            pattern(want, bytes, seed);
            if (rank == root)
                memcpy(buf, want, bytes);
            else
                pattern(buf, bytes, seed + 7777u + (uint64_t)wrank);
            int ints = bytes % 4 == 0;
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            int rc = MPI_Bcast(buf, ints ? (int)(bytes / 4) : (int)bytes, ints ? MPI_INT : MPI_BYTE,
                               root, comm);
            double dt = MPI_Wtime() - t0, dmax = 0;
            int errors = rc != MPI_SUCCESS || memcmp(buf, want, bytes) != 0, esum = 0;
            MPI_Allreduce(&dt, &dmax, 1, MPI_DOUBLE, MPI_MAX, comm);
            MPI_Allreduce(&errors, &esum, 1, MPI_INT, MPI_SUM, comm);
            if (rank == 0 && (!split || wrank == 0))
                printf("bcast bytes=%lu root=%d rep=%d seconds=%.4f errors=%d\n", bytes, root, k,
                       dmax, esum);
            errors_total += esum;
        }
        free(buf);
        free(want);
    }
    int all = 0;
    MPI_Allreduce(&errors_total, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("plain_bcast %s\n", all ? "FAILED" : "OK");
        fflush(stdout);
    }
    if (hold != NULL) {
        char path[4096];
        if (wrank == 0) {
            snprintf(path, sizeof path, "%s/ready", hold);
            FILE *f = fopen(path, "w");
            if (f != NULL)
                fclose(f);
        }
        snprintf(path, sizeof path, "%s/go", hold);
        while (access(path, F_OK) != 0)
            usleep(100000);
    }
    if (split)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return all ? 1 : 0;
}
