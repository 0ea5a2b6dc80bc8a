/*
 * plain_allreduce.c -- an ordinary MPI program that knows nothing about sdnmpi (for the
 * LD_PRELOAD test). It calls MPI_Allreduce on MPI_COMM_WORLD and on a split communicator, small
 * and large, with and without MPI_IN_PLACE, and each communicator's rank 0 prints the results (the
 * lines of the two halves may interleave: compare them sorted). Values are small
 * integers (also as doubles), so any summation order gives the same exact output.
 *
 * Usage: plain_allreduce [thread|kinds]   ("thread": MPI_Init_thread instead of MPI_Init; "kinds",
 * 4 ranks or more: then also on communicators made by MPI_Comm_split_type (shared, in reverse
 * order), MPI_Comm_dup_with_info, MPI_Comm_create_group (world ranks size - 1, 1, 2, called by
 * those alone) and MPI_Comm_idup (the world's calls run while it is pending))
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "plain_allreduce: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static unsigned long long fold(const long long *v, int n)
{
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (unsigned long long)v[i]) * 1099511628211ull;
    return h;
}

static void run(MPI_Comm comm, const char *name, int n, int rank, int world_rank)
{
    long long *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    double *d = malloc((size_t)n * sizeof *d);
    if (a == NULL || b == NULL || d == NULL) {
        fprintf(stderr, "plain_allreduce: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < n; i++) {
        a[i] = (long long)((world_rank + 1) * (i % 97) - i % 13);
        d[i] = (double)((world_rank * 7 + i) % 64);
    }
    check(MPI_Allreduce(a, b, n, MPI_LONG_LONG, MPI_SUM, comm), "sum");
    check(MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, comm), "in place");
    long long m[2] = {world_rank, -world_rank}, mr[2];
    check(MPI_Allreduce(m, mr, 2, MPI_LONG_LONG, MPI_MAX, comm), "max");
    long long dsum = 0;
    for (int i = 0; i < n; i++)
        dsum += (long long)d[i];
    if (rank == 0)
        printf("%s n=%d sum_hash=%016llx dsum=%lld max=%lld,%lld\n", name, n, fold(b, n), dsum,
               mr[0], mr[1]);
    free(a), free(b), free(d);
}

/* The communicators of "kinds"; the world's calls while the idup is pending. */
static void kinds(int rank, int size)
{
    MPI_Comm shared, dupinfo, group = MPI_COMM_NULL, idup;
    MPI_Info info;
    MPI_Group world, members;
    MPI_Request req;
    const int ranks[3] = {size - 1, 1, 2};
    int r;
    if (size < 4) {
        fprintf(stderr, "plain_allreduce: kinds needs 4 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL,
                              &shared), "split_type");
    check(MPI_Info_create(&info), "info");
    check(MPI_Info_set(info, "plain_allreduce", "1"), "info set");
    check(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dupinfo), "dup_with_info");
    check(MPI_Info_free(&info), "info free");
    check(MPI_Comm_group(MPI_COMM_WORLD, &world), "group");
    check(MPI_Group_incl(world, 3, ranks, &members), "group incl");
    if (rank == size - 1 || rank == 1 || rank == 2)
        check(MPI_Comm_create_group(MPI_COMM_WORLD, members, 5, &group), "create_group");
    check(MPI_Group_free(&members), "group free");
    check(MPI_Group_free(&world), "group free");
    check(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req), "idup");
    run(MPI_COMM_WORLD, "world-idup", 20001, rank, rank);
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
    check(MPI_Comm_rank(shared, &r), "rank");
    run(shared, "shared", 20001, r, rank);
    check(MPI_Comm_rank(dupinfo, &r), "rank");
    run(dupinfo, "dupinfo", 20001, r, rank);
    if (group != MPI_COMM_NULL) {
        check(MPI_Comm_rank(group, &r), "rank");
        run(group, "group", 20001, r, rank);
        check(MPI_Comm_free(&group), "free");
    }
    check(MPI_Comm_rank(idup, &r), "rank");
    run(idup, "idup", 20001, r, rank);
    run(idup, "idup", 5, r, rank);
    fflush(stdout);
    check(MPI_Comm_free(&shared), "free");
    check(MPI_Comm_free(&dupinfo), "free");
    check(MPI_Comm_free(&idup), "free");
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    if (argc > 1 && !strcmp(argv[1], "thread"))
        check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "init thread");
    else
        check(MPI_Init(&argc, &argv), "init");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "size");
    MPI_Comm half;
    check(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half), "split");
    int hrank;
    check(MPI_Comm_rank(half, &hrank), "rank");
    for (int rep = 0; rep < 2; rep++) {
        run(MPI_COMM_WORLD, "world", 5, rank, rank);
        run(MPI_COMM_WORLD, "world", 20001, rank, rank);
        run(half, rank % 2 ? "odd" : "even", 20001, hrank, rank);
        fflush(stdout);
    }
    if (argc > 1 && !strcmp(argv[1], "kinds"))
        kinds(rank, size);
    check(MPI_Comm_free(&half), "free");
    check(MPI_Finalize(), "finalize");
    return 0;
}
