/* prof_patterns.c -- known traffic patterns for the profiler's tests (tests/unit/test_profiler.py).
 * A plain MPI program: nothing of sdnmpi in it. Usage: prof_patterns PATTERN [BYTES]
 *
 *   ring B       rank r sends B bytes to r+1 (mod p), 3 times; receives with MPI_ANY_SOURCE
 *   alltoall     rank i sends (i*p + j + 1) * 8 bytes to every j != i (Isend/Irecv)
 *   split B      split by r % 2 (key -r: reversed order), Pcontrol(1), a ring of B + r bytes in
 *                each half (sub-rank s sends to s+1), Pcontrol(0)
 *   comms B      Pcontrol(1): a ring of B bytes on a dup of MPI_COMM_WORLD; Pcontrol(2): on a 1-D
 *                periodic Cartesian communicator (no reordering); Pcontrol(3): on
 *                MPI_Comm_create_group of the even world ranks in reversed order; Pcontrol(0)
 *   allreduce B  one MPI_Allreduce of B/8 doubles on MPI_COMM_WORLD
 *   bcast B      one MPI_Bcast of B bytes from rank 0
 *   iallreduce B one MPI_Iallreduce of B/8 doubles, then MPI_Wait
 *   phases B     Pcontrol(1), ring B; Pcontrol(2), alltoall; Pcontrol(1), ring B; Pcontrol(0)
 * Exits 1 if the data that arrived is wrong.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "prof_patterns: %s\n", what);
        failed = 1;
    }
}

/* One ring round on comm: `bytes` to the next rank, from the previous via MPI_ANY_SOURCE. */
static void ring(MPI_Comm comm, int bytes)
{
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    char *out = malloc((size_t)bytes + 1), *in = malloc(4 * (size_t)bytes + 1);
    check(out != NULL && in != NULL, "out of memory");
    memset(out, 'a' + r % 26, (size_t)bytes);
    MPI_Request req;
    MPI_Status st;
    MPI_Isend(out, bytes, MPI_CHAR, (r + 1) % p, 7, comm, &req);
    MPI_Recv(in, 4 * bytes, MPI_CHAR, MPI_ANY_SOURCE, 7, comm, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(st.MPI_SOURCE == (r + p - 1) % p, "ring: wrong source");
    free(out);
    free(in);
}

static void alltoall(void)
{
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Request *reqs = malloc(2 * (size_t)p * sizeof *reqs);
    MPI_Status *stats = malloc(2 * (size_t)p * sizeof *stats);
    double **out = calloc((size_t)p, sizeof *out), **in = calloc((size_t)p, sizeof *in);
    check(reqs != NULL && stats != NULL && out != NULL && in != NULL, "out of memory");
    int n = 0;
    for (int j = 0; j < p; j++) {
        if (j == r)
            continue;
        int cin = j * p + r + 1, cout = r * p + j + 1;
        in[j] = malloc((size_t)cin * sizeof(double));
        out[j] = malloc((size_t)cout * sizeof(double));
        check(in[j] != NULL && out[j] != NULL, "out of memory");
        for (int k = 0; k < cout; k++)
            out[j][k] = r * 1000.0 + j;
        MPI_Irecv(in[j], cin, MPI_DOUBLE, j, 3, MPI_COMM_WORLD, &reqs[n++]);
        MPI_Isend(out[j], cout, MPI_DOUBLE, j, 3, MPI_COMM_WORLD, &reqs[n++]);
    }
    MPI_Waitall(n, reqs, stats);
    for (int j = 0; j < p; j++) {
        if (j == r)
            continue;
        check(in[j][0] == j * 1000.0 + r, "alltoall: wrong data");
        free(in[j]);
        free(out[j]);
    }
    free(in);
    free(out);
    free(reqs);
    free(stats);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *what = argc > 1 ? argv[1] : "";
    int bytes = argc > 2 ? atoi(argv[2]) : 1024;
    if (strcmp(what, "ring") == 0) {
        for (int i = 0; i < 3; i++)
            ring(MPI_COMM_WORLD, bytes);
    } else if (strcmp(what, "alltoall") == 0) {
        alltoall();
    } else if (strcmp(what, "split") == 0) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &half);
        MPI_Pcontrol(1);
        ring(half, bytes + r);
        MPI_Pcontrol(0);
        MPI_Comm_free(&half);
    } else if (strcmp(what, "comms") == 0) {
        MPI_Comm dup, cart, evens = MPI_COMM_NULL;
        MPI_Group world, group;
        int dims[1] = {p}, periods[1] = {1}, n = (p + 1) / 2;
        int *ranks = malloc((size_t)n * sizeof *ranks);
        check(ranks != NULL, "out of memory");
        for (int i = 0; i < n; i++)
            ranks[i] = 2 * (n - 1 - i);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, n, ranks, &group);
        if (r % 2 == 0)
            MPI_Comm_create_group(MPI_COMM_WORLD, group, 9, &evens);
        MPI_Pcontrol(1);
        ring(dup, bytes);
        MPI_Pcontrol(2);
        ring(cart, bytes);
        MPI_Pcontrol(3);
        if (evens != MPI_COMM_NULL)
            ring(evens, bytes);
        MPI_Pcontrol(0);
        if (evens != MPI_COMM_NULL)
            MPI_Comm_free(&evens);
        MPI_Group_free(&group);
        MPI_Group_free(&world);
        MPI_Comm_free(&cart);
        MPI_Comm_free(&dup);
        free(ranks);
    } else if (strcmp(what, "allreduce") == 0 || strcmp(what, "iallreduce") == 0) {
        int n = bytes / 8;
        double *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
        check(in != NULL && out != NULL, "out of memory");
        for (int i = 0; i < n; i++)
            in[i] = r + i;
        if (what[0] == 'i') {
            MPI_Request req;
            MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        check(n == 0 || out[0] == p * (p - 1) / 2.0, "allreduce: wrong sum");
        free(in);
        free(out);
    } else if (strcmp(what, "bcast") == 0) {
        char *buf = malloc((size_t)bytes + 1);
        check(buf != NULL, "out of memory");
        memset(buf, r == 0 ? 'x' : 'y', (size_t)bytes);
        MPI_Bcast(buf, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        check(bytes == 0 || buf[bytes - 1] == 'x', "bcast: wrong data");
        free(buf);
    } else if (strcmp(what, "phases") == 0) {
        MPI_Pcontrol(1);
        ring(MPI_COMM_WORLD, bytes);
        MPI_Pcontrol(2);
        alltoall();
        MPI_Pcontrol(1);
        ring(MPI_COMM_WORLD, bytes);
        MPI_Pcontrol(0);
    } else {
        check(0, "unknown pattern");
    }
    MPI_Finalize();
    return failed;
}
