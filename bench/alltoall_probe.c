/* alltoall_probe.c -- where an alltoall's time goes on the bench fabric (bench/alltoall_probe.py
 * starts it under mpirun; not part of `make bench`).
 *
 *   alltoall_probe --order R,R,... --bytes N[,N...] --reps K [--schedule xor|shift] [--calls-only 1]
 *
 * --order: the world ranks leaf by leaf (the order of the library's private communicator, so
 * that step k of the pairwise exchange pairs position i with position i XOR k, as
 * SDN_MPI_Alltoall does). For every size (bytes each rank sends in all) rank 0 prints JSON lines,
 * every timestamp in CLOCK_REALTIME seconds so that the driver can line them up with its link
 * samples:
 *   phase "openmpi"   MPI_Alltoall, K calls, alternating with
 *   phase "sdnmpi"    SDN_MPI_Alltoall, K calls (the first plans the exchange's routes, which
 *                     Open MPI's later calls then ride on too: the bench, not this probe, gives
 *                     Open MPI the default routes);
 *   (--calls-only 1: only these two)
 *   phase "pairwise"  a pairwise exchange written out here (--schedule xor: rank i and i XOR k
 *                     swap blocks at step k; shift, the default: i sends to i + d and receives
 *                     from i - d, SDN_MPI_Alltoall's steps), window 1, with each step's end on the
 *                     slowest rank (t_steps, seconds since the common start);
 *   phase "step"      each step k alone (one block per rank, blocking Sendrecv), K times: the
 *                     time of one contention-free permutation.
 * Every call starts after a barrier; its time is the slowest rank's.
 */
#include <mpi.h>
#include <sdnmpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXP 64

static int rank, nprocs, pos, order[MAXP], where[MAXP], shift = 1, calls_only;

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "alltoall_probe: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what);
}

static double slowest(double t)
{
    double m = 0;
    check(MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    return m;
}

/* Step k: whom this rank sends to and receives from (--schedule xor: the same rank; shift: k
 * ahead and k behind in the leaf order, in SDN_MPI_Alltoall's step order). */
static void peers(int k, int *to, int *from)
{
    if (!shift) {
        *to = *from = order[pos ^ k];
        return;
    }
    int d = k <= nprocs / 2 ? k : nprocs + nprocs / 2 - k;
    *to = order[(pos + d) % nprocs];
    *from = order[(pos - d + nprocs) % nprocs];
}

/* One pairwise exchange, window 1; ends[k-1] = this rank's end of step k since t0. */
static void pairwise(const char *in, char *out, int block, double t0, double *ends)
{
    memcpy(out + (size_t)rank * (size_t)block, in + (size_t)rank * (size_t)block, (size_t)block);
    for (int k = 1; k < nprocs; k++) {
        int to, from;
        peers(k, &to, &from);
        check(MPI_Sendrecv(in + (size_t)to * (size_t)block, block, MPI_BYTE, to, 7,
                           out + (size_t)from * (size_t)block, block, MPI_BYTE, from, 7,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Sendrecv");
        ends[k - 1] = MPI_Wtime() - t0;
    }
}

static void run_size(long bytes, int reps, char *in, char *out)
{
    int block = (int)(bytes / nprocs);
    double ends[MAXP], worst[MAXP];
    for (int r = 0; r < reps; r++) /* the two alternate, call by call */
        for (int impl = 0; impl < 2; impl++) {
            check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double w0 = wall(), t0 = MPI_Wtime();
            check((impl ? SDN_MPI_Alltoall : MPI_Alltoall)(in, block, MPI_BYTE, out, block,
                                                           MPI_BYTE, MPI_COMM_WORLD),
                  "alltoall");
            double t = slowest(MPI_Wtime() - t0);
            if (rank == 0)
                printf("{\"probe\": \"%s\", \"bytes\": %ld, \"rep\": %d, \"t0\": %.6f, "
                       "\"t_s\": %.6f}\n", impl ? "sdnmpi" : "openmpi", bytes, r, w0, t);
        }
    if (calls_only) {
        fflush(stdout);
        return;
    }
    for (int r = 0; r < reps; r++) {
        check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
        double w0 = wall(), t0 = MPI_Wtime();
        pairwise(in, out, block, t0, ends);
        check(MPI_Reduce(ends, worst, nprocs - 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
              "MPI_Reduce");
        if (rank == 0) {
            printf("{\"probe\": \"pairwise\", \"bytes\": %ld, \"rep\": %d, \"t0\": %.6f, "
                   "\"t_s\": %.6f, \"t_steps\": [", bytes, r, w0, worst[nprocs - 2]);
            for (int k = 0; k < nprocs - 1; k++)
                printf("%s%.6f", k ? ", " : "", worst[k]);
            printf("]}\n");
        }
    }
    for (int k = 1; k < nprocs; k++)
        for (int r = 0; r < reps; r++) {
            int to, from;
            peers(k, &to, &from);
            check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            double w0 = wall(), t0 = MPI_Wtime();
            check(MPI_Sendrecv(in, block, MPI_BYTE, to, 8, out, block, MPI_BYTE, from, 8,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Sendrecv");
            double t = slowest(MPI_Wtime() - t0);
            if (rank == 0)
                printf("{\"probe\": \"step\", \"bytes\": %ld, \"step\": %d, \"rep\": %d, "
                       "\"t0\": %.6f, \"t_s\": %.6f}\n", bytes, k, r, w0, t);
        }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long sizes[16];
    int nsizes = 0, reps = 3, norder = 0;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > MAXP || (nprocs & (nprocs - 1)))
        die("p must be a power of two <= 64");
    for (int i = 1; i + 1 < argc; i += 2) {
        char *v = argv[i + 1], *tok, *save = NULL;
        if (!strcmp(argv[i], "--schedule"))
            shift = !strcmp(v, "shift");
        else if (!strcmp(argv[i], "--calls-only"))
            calls_only = atoi(v);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(v);
        else if (!strcmp(argv[i], "--order"))
            for (tok = strtok_r(v, ",", &save); tok && norder < MAXP; tok = strtok_r(NULL, ",", &save))
                order[norder++] = atoi(tok);
        else if (!strcmp(argv[i], "--bytes"))
            for (tok = strtok_r(v, ",", &save); tok && nsizes < 16; tok = strtok_r(NULL, ",", &save))
                sizes[nsizes++] = atol(tok);
        else
            die("unknown option");
    }
    if (norder != nprocs || reps < 1 || nsizes < 1)
        die("need --order with p ranks, --bytes, --reps >= 1");
    for (int i = 0; i < nprocs; i++)
        where[order[i]] = i;
    pos = where[rank];
    long max = 0;
    for (int i = 0; i < nsizes; i++)
        max = sizes[i] > max ? sizes[i] : max;
    char *in = malloc((size_t)max), *out = malloc((size_t)max);
    if (!in || !out)
        die("out of memory");
    for (long i = 0; i < max; i++)
        in[i] = (char)(i * 7 + rank);
    check(SDN_MPI_Init(), "SDN_MPI_Init");
    for (int i = 0; i < nsizes; i++)
        run_size(sizes[i], reps, in, out);
    check(SDN_MPI_Finalize(), "SDN_MPI_Finalize");
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
