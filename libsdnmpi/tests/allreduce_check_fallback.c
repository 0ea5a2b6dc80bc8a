/*
 * allreduce_check_fallback.c -- allreduce_check's calls that must fall back (allreduce_check.h):
 * a derived datatype, user-defined ops (commutative or not), an intercommunicator; each must
 * take PMPI_Allreduce and give exactly its result.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce_check.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"

/* A call that must fall back gives exactly PMPI_Allreduce's result. */
void fallback_case(MPI_Comm comm, const char *what, const void *send, int count,
                          MPI_Datatype dt, MPI_Op op, size_t bytes)
{
    char *a = xmalloc(bytes), *b = xmalloc(bytes);
    memset(a, 0, bytes);
    memset(b, 0, bytes);
    cases++;
    check_mpi(SDN_MPI_Allreduce(send, a, count, dt, op, comm), what);
    int path = sdnmpi_test_last_path();
    check_mpi(PMPI_Allreduce(send, b, count, dt, op, comm), what);
    path_count[path]++;
    if (path != 1)
        FAIL("%s: path %s, expected pmpi", what, path_names[path]);
    if (memcmp(a, b, bytes))
        FAIL("%s: result differs from PMPI_Allreduce", what);
    free(a), free(b);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((double *)inout)[i] += ((double *)in)[i];
}

/* Predefined ops are not defined for derived datatypes: a user op on pairs of ints. */
static void user_pair_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < 2 * *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Non-commutative: inout = in * 3 + inout (order matters). */
static void user_noncomm(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i] * 3 + ((int *)inout)[i];
}

void run_fallbacks(uint64_t seed, int world_rank)
{
    int n = 301;
    double *d = xmalloc(n * sizeof *d);
    int *x = xmalloc(2 * n * sizeof *x);
    seed_rng(seed, (uint64_t)world_rank, 99);
    for (int i = 0; i < n; i++)
        d[i] = 0.5 + unif();
    for (int i = 0; i < 2 * n; i++)
        x[i] = (int)(rnd() % 100);
    MPI_Datatype pair;
    check_mpi(MPI_Type_contiguous(2, MPI_INT, &pair), "type contiguous");
    check_mpi(MPI_Type_commit(&pair), "type commit");
    MPI_Op op;
    check_mpi(MPI_Op_create(user_pair_sum, 1, &op), "op create");
    fallback_case(MPI_COMM_WORLD, "derived datatype", x, n, pair, op, 2 * n * sizeof(int));
    check_mpi(MPI_Op_free(&op), "op free");
    check_mpi(MPI_Type_free(&pair), "type free");
    check_mpi(MPI_Op_create(user_sum, 1, &op), "op create");
    fallback_case(MPI_COMM_WORLD, "user op", d, n, MPI_DOUBLE, op, n * sizeof(double));
    check_mpi(MPI_Op_free(&op), "op free");
    check_mpi(MPI_Op_create(user_noncomm, 0, &op), "op create");
    fallback_case(MPI_COMM_WORLD, "non-commutative op", x, n, MPI_INT, op, n * sizeof(int));
    check_mpi(MPI_Op_free(&op), "op free");
    free(d), free(x);
}
