/* failmalloc_job45.c -- every SDN collective once or twice on MPI_COMM_WORLD and on a duplicate of
 * it, each result compared bit for bit with the PMPI call's (computed first), for the malloc-failure
 * test (tests/unit/test_libsdnmpi_failmalloc45.py, under the failmalloc45.c shim). The duplicate
 * only with the option --dup (made by SDN_MPI_Comm_dup: its plan is requested ahead).
 *
 * All the program's own buffers are allocated before sdnmpi_failmalloc_start() (the shim's, if
 * preloaded), so that from there on the shim counts the library's allocations only. The values are
 * small integers: every sum is exact, in any order. Each rank prints its failures
 * ("failmalloc_job45[R]: FAIL what: ..."); world rank 0 then prints
 * "failmalloc_job45: p=P wrong=W errors=E" (W results that differ from PMPI's, E calls that
 * returned an error code, summed over the ranks); exit status 1 if W + E > 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdnmpi.h"

void sdnmpi_failmalloc_start(void) __attribute__((weak));

#define SMALL 64     /* doubles: recursive doubling */
#define LARGE 8192   /* doubles, 64 KiB: hierarchical allreduce / Reduce's chains */
#define MID 2048     /* doubles, 16 KiB: Rabenseifner-sized Reduce (reduce-scatter + gather) */
#define BLOCK 256    /* ints per rank: Allgather and Alltoall */
#define BCAST 4096   /* ints, 16 KiB */

static int rank, size, wrong, errors;

static void *alloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (p == NULL) {
        fprintf(stderr, "failmalloc_job45[%d]: out of memory before the start\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* The SDN call's code and result (bytes at got) against PMPI's (at want). */
static void check(const char *what, int rc, const void *got, const void *want, size_t bytes)
{
    if (rc != MPI_SUCCESS) {
        errors++;
        printf("failmalloc_job45[%d]: FAIL %s: error code %d\n", rank, what, rc);
    } else if (memcmp(got, want, bytes) != 0) {
        wrong++;
        printf("failmalloc_job45[%d]: FAIL %s: result differs from PMPI's\n", rank, what);
    }
}

struct bufs {
    double *in_s, *in_l, *ar_s, *ar_l, *ar_s0, *ar_l0, *rd_m, *rd_l, *rd_m0, *rd_l0;
    int *bc, *bc0, *ag_in, *ag, *ag0, *a2a_in, *a2a, *a2a0;
};

/* n buffers of `count` doubles or ints each, into *list[0 .. n-1]. */
static void doubles(double **list[], int n, size_t count)
{
    for (int i = 0; i < n; i++)
        *list[i] = alloc(count * sizeof(double));
}

static void ints(int **list[], int n, size_t count)
{
    for (int i = 0; i < n; i++)
        *list[i] = alloc(count * sizeof(int));
}

static void fill(struct bufs *b)
{
    size_t p = (size_t)size;
    double **small[] = {&b->in_s, &b->ar_s, &b->ar_s0}, **mid[] = {&b->rd_m, &b->rd_m0};
    double **large[] = {&b->in_l, &b->ar_l, &b->ar_l0, &b->rd_l, &b->rd_l0};
    int **bcast[] = {&b->bc, &b->bc0}, **block[] = {&b->ag_in};
    int **blocks[] = {&b->ag, &b->ag0, &b->a2a_in, &b->a2a, &b->a2a0};
    doubles(small, 3, SMALL);
    doubles(mid, 2, MID);
    doubles(large, 5, LARGE);
    ints(bcast, 2, BCAST);
    ints(block, 1, BLOCK);
    ints(blocks, 5, p * BLOCK);
    for (int i = 0; i < SMALL; i++)
        b->in_s[i] = (double)((rank * 7 + i) % 13);
    for (int i = 0; i < LARGE; i++)
        b->in_l[i] = (double)((rank * 5 + i * 3) % 17);
    for (int i = 0; i < BLOCK; i++)
        b->ag_in[i] = rank * 1000 + i;
    for (size_t i = 0; i < p * BLOCK; i++)
        b->a2a_in[i] = rank * 100000 + (int)i;
}

/* The PMPI results on comm. */
static int reference(struct bufs *b, MPI_Comm comm)
{
    int rc, root = 1 % size;
    for (int i = 0; i < BCAST; i++)
        b->bc0[i] = rank == root ? i * 31 + 7 : -1;
    if ((rc = PMPI_Allreduce(b->in_s, b->ar_s0, SMALL, MPI_DOUBLE, MPI_SUM, comm)) != MPI_SUCCESS
        || (rc = PMPI_Allreduce(b->in_l, b->ar_l0, LARGE, MPI_DOUBLE, MPI_SUM, comm)) != MPI_SUCCESS
        || (rc = PMPI_Bcast(b->bc0, BCAST, MPI_INT, root, comm)) != MPI_SUCCESS
        || (rc = PMPI_Allgather(b->ag_in, BLOCK, MPI_INT, b->ag0, BLOCK, MPI_INT, comm)) != MPI_SUCCESS
        || (rc = PMPI_Reduce(b->in_l, b->rd_m0, MID, MPI_DOUBLE, MPI_SUM, 0, comm)) != MPI_SUCCESS
        || (rc = PMPI_Reduce(b->in_l, b->rd_l0, LARGE, MPI_DOUBLE, MPI_SUM, size - 1, comm))
               != MPI_SUCCESS)
        return rc;
    return PMPI_Alltoall(b->a2a_in, BLOCK, MPI_INT, b->a2a0, BLOCK, MPI_INT, comm);
}

/* The SDN calls on comm, each checked. */
static void sdn_calls(struct bufs *b, MPI_Comm comm, const char *name)
{
    char what[96];
    int root = 1 % size, r;
#define WHAT(coll) (snprintf(what, sizeof what, "%s %s", name, coll) > 0 ? what : coll)
    r = SDN_MPI_Allreduce(b->in_s, b->ar_s, SMALL, MPI_DOUBLE, MPI_SUM, comm);
    check(WHAT("allreduce small"), r, b->ar_s, b->ar_s0, SMALL * sizeof(double));
    r = SDN_MPI_Allreduce(b->in_l, b->ar_l, LARGE, MPI_DOUBLE, MPI_SUM, comm);
    check(WHAT("allreduce large"), r, b->ar_l, b->ar_l0, LARGE * sizeof(double));
    for (int i = 0; i < BCAST; i++)
        b->bc[i] = rank == root ? i * 31 + 7 : -1;
    r = SDN_MPI_Bcast(b->bc, BCAST, MPI_INT, root, comm);
    check(WHAT("bcast"), r, b->bc, b->bc0, BCAST * sizeof(int));
    r = SDN_MPI_Allgather(b->ag_in, BLOCK, MPI_INT, b->ag, BLOCK, MPI_INT, comm);
    check(WHAT("allgather"), r, b->ag, b->ag0, (size_t)size * BLOCK * sizeof(int));
    r = SDN_MPI_Reduce(b->in_l, b->rd_m, MID, MPI_DOUBLE, MPI_SUM, 0, comm);
    check(WHAT("reduce mid"), r, b->rd_m, b->rd_m0, rank == 0 ? MID * sizeof(double) : 0);
    r = SDN_MPI_Reduce(b->in_l, b->rd_l, LARGE, MPI_DOUBLE, MPI_SUM, size - 1, comm);
    check(WHAT("reduce large"), r, b->rd_l, b->rd_l0, rank == size - 1 ? LARGE * sizeof(double) : 0);
    r = SDN_MPI_Alltoall(b->a2a_in, BLOCK, MPI_INT, b->a2a, BLOCK, MPI_INT, comm);
    check(WHAT("alltoall"), r, b->a2a, b->a2a0, (size_t)size * BLOCK * sizeof(int));
#undef WHAT
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 2;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct bufs b;
    fill(&b);
    if (reference(&b, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (sdnmpi_failmalloc_start)
        sdnmpi_failmalloc_start();
    int rc = SDN_MPI_Init();
    check("init", rc, "", "", 0);
    sdn_calls(&b, MPI_COMM_WORLD, "world");
    MPI_Comm dup = MPI_COMM_NULL;
    if (argc > 1 && !strcmp(argv[1], "--dup")) {
        rc = SDN_MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        check("comm_dup", rc, "", "", 0);
        if (rc == MPI_SUCCESS) {
            sdn_calls(&b, dup, "dup");
            MPI_Comm_free(&dup);
        }
    }
    check("finalize", SDN_MPI_Finalize(), "", "", 0);
    int mine[2] = {wrong, errors}, all[2] = {0, 0};
    if (PMPI_Reduce(mine, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0)
        printf("failmalloc_job45: p=%d wrong=%d errors=%d\n", size, all[0], all[1]);
    MPI_Finalize();
    return all[0] + all[1] > 0;
}
