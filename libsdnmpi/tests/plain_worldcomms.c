/*
 * plain_worldcomms.c -- an ordinary MPI program, for the preload tests of the deferred library
 * communicator (libsdnmpi/src/plan_comm.h): right after MPI_Init it makes communicators of
 * MPI_COMM_WORLD in the order its argument names them, while the preload library's own creation of
 * the world (SDN_MPI_LIB_COMM=defer) may still be under way: i MPI_Comm_idup (the world's
 * MPI_Allreduce runs while it is pending), d MPI_Comm_dup, s MPI_Comm_split (halves, reversed), c
 * MPI_Cart_create (1-D, reorder), w MPI_Win_create (a window on the world, then freed). Then
 * MPI_Allreduce on the world and on each communicator, each compared with PMPI_Allreduce of the
 * same data bit for bit (a mismatch aborts). "-": no communicator, no collective (MPI_Finalize
 * with the library's creation still under way).
 *
 * Under the preload library (its test hook found with dlsym), every rank prints
 *   worldcomms: rank=R pending_before=B pending_after=A calls=N
 * B: the library's creation was under way before the first creation call, A: after it; N: calls
 * compared. Without it: pending_before=-1 pending_after=-1.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*pending_fn)(void);

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "plain_worldcomms: %s failed (%d)\n", what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* MPI_Allreduce of 64 long longs and 4096 doubles (small integers: any order sums exactly) against
 * PMPI_Allreduce's; aborts on a difference. */
static int compare(MPI_Comm comm, int salt)
{
    enum { NL = 64, ND = 4096 };
    static long long a[NL], b[NL], c[NL];
    static double d[ND], e[ND], f[ND];
    int rank;
    check(MPI_Comm_rank(comm, &rank), "rank");
    for (int i = 0; i < NL; i++)
        a[i] = (long long)((rank + 1) * (i % 31) - salt * (i % 7));
    for (int i = 0; i < ND; i++)
        d[i] = (double)((rank * 5 + i + salt) % 128);
    check(MPI_Allreduce(a, b, NL, MPI_LONG_LONG, MPI_SUM, comm), "allreduce");
    check(PMPI_Allreduce(a, c, NL, MPI_LONG_LONG, MPI_SUM, comm), "PMPI_Allreduce");
    check(MPI_Allreduce(d, e, ND, MPI_DOUBLE, MPI_SUM, comm), "allreduce");
    check(PMPI_Allreduce(d, f, ND, MPI_DOUBLE, MPI_SUM, comm), "PMPI_Allreduce");
    if (memcmp(b, c, sizeof b) != 0 || memcmp(e, f, sizeof e) != 0) {
        fprintf(stderr, "plain_worldcomms: result differs from PMPI's (salt %d)\n", salt);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return 2;
}

int main(int argc, char **argv)
{
    enum { MAXC = 8 };
    MPI_Comm made[MAXC];
    MPI_Win win = MPI_WIN_NULL;
    int nmade = 0, calls = 0, rank, size, before = -1, after = -1;
    const char *order = argc > 1 ? argv[1] : "ids";
    pending_fn pending;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "size");
    *(void **)&pending = dlsym(RTLD_DEFAULT, "sdnmpi_test_libworld_pending");
    if (pending != NULL)
        before = pending();
    for (const char *k = order; *k != '\0' && *k != '-' && nmade < MAXC; k++) {
        MPI_Request req;
        int dims[1] = {size}, periods[1] = {0};
        static long long winbuf[4];
        switch (*k) {
        case 'i':
            check(MPI_Comm_idup(MPI_COMM_WORLD, &made[nmade], &req), "idup");
            calls += compare(MPI_COMM_WORLD, 1); /* the world's plan while the idup is pending */
            check(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
            break;
        case 'd':
            check(MPI_Comm_dup(MPI_COMM_WORLD, &made[nmade]), "dup");
            break;
        case 's':
            check(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &made[nmade]), "split");
            break;
        case 'c':
            check(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &made[nmade]), "cart");
            break;
        case 'w':
            check(MPI_Win_create(winbuf, sizeof winbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                  "win_create");
            check(MPI_Win_free(&win), "win_free");
            continue;
        default:
            fprintf(stderr, "plain_worldcomms: unknown kind %c\n", *k);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (k == order && pending != NULL)
            after = pending();
        nmade++;
    }
    if (pending != NULL && after < 0 && order[0] == 'w')
        after = pending();
    if (order[0] != '-') {
        calls += compare(MPI_COMM_WORLD, 2);
        for (int c = 0; c < nmade; c++)
            calls += compare(made[c], 10 + c);
    }
    for (int c = 0; c < nmade; c++)
        check(MPI_Comm_free(&made[c]), "free");
    printf("worldcomms: rank=%d pending_before=%d pending_after=%d calls=%d\n", rank, before, after,
           calls);
    check(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
