/* coll_bench_more.c -- the benchmark rows of SDN_MPI_Allgather, SDN_MPI_Reduce and
 * SDN_MPI_Alltoall (issue 17; coll_bench.h). */
#include <sdnmpi.h>
#include <string.h>

#include "coll_bench.h"

/* --- Allgather, Reduce, Alltoall (issue 17) -------------------------------------------------
 * `bytes` is what each rank receives (allgather: p blocks of bytes/p), sends (alltoall: p blocks)
 * or reduces (reduce: doubles, SUM, to root 0). Same alternation and checks as allreduce. */
struct more_args {
    int n;        /* doubles per rank (allgather, alltoall: p blocks of n / p) */
    double *out;
};

static int call_more(enum impl which, void *args)
{
    const struct more_args *a = args;
    const char *c = opt.collective;
    int block = a->n / nprocs;
    if (!strcmp(c, "allgather"))
        return (which == SDNMPI ? SDN_MPI_Allgather : MPI_Allgather)(
            abuf_send, block, MPI_DOUBLE, a->out, block, MPI_DOUBLE, MPI_COMM_WORLD);
    if (!strcmp(c, "alltoall"))
        return (which == SDNMPI ? SDN_MPI_Alltoall : MPI_Alltoall)(
            abuf_send, block, MPI_DOUBLE, a->out, block, MPI_DOUBLE, MPI_COMM_WORLD);
    return (which == SDNMPI ? SDN_MPI_Reduce : MPI_Reduce)(abuf_send, a->out, a->n, MPI_DOUBLE,
                                                           MPI_SUM, 0, MPI_COMM_WORLD);
}

/* One timed call (slowest rank); after a route switch in the timed loop (`settle` set), --settle
 * calls first, timed apart (timed_settled), as timed_allreduce does. */
static double timed_more(enum impl which, long bytes, double *out, int settle)
{
    struct more_args a = {(int)(bytes / (long)sizeof(double)), out};
    return timed_settled(which, opt.collective, settle ? impl_name[which] : NULL, bytes, call_more, &a);
}

void run_more(void)
{
    sdn_init();
    for (int k = 0; k < opt.nsizes; k++) { /* warm-up and check: the bytes must be Open MPI's */
        long bytes = opt.sizes[k];
        size_t n = (size_t)(bytes / (long)sizeof(double));
        if (!strcmp(opt.collective, "reduce") && my_rank != 0)
            n = 0; /* only the root's result is defined */
        else if (strcmp(opt.collective, "reduce"))
            n = n / (size_t)nprocs * (size_t)nprocs;
        (void)timed_more(k % 2 ? OPENMPI : SDNMPI, bytes, k % 2 ? abuf_ref : abuf_recv, 0);
        (void)timed_more(k % 2 ? SDNMPI : OPENMPI, bytes, k % 2 ? abuf_recv : abuf_ref, 0);
        int ok = memcmp(abuf_ref, abuf_recv, n * sizeof(double)) == 0, all = 0;
        check_mpi(MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD), "MPI_Reduce");
        emit_json("\"check\", \"collective\": \"%s\", \"bytes\": %ld, \"ok\": %s", opt.collective,
                  bytes, all ? "true" : "false");
    }
    for (int rep = 0; rep < opt.reps; rep++) {
        for (int k = 0; k < opt.nsizes; k++)
            for (int j = 0; j < 2; j++) {
                enum impl which = (enum impl)((j + rep + k) % 2);
                double t = timed_more(which, opt.sizes[k], abuf_recv, 1);
                emit_sample(opt.collective, which, opt.sizes[k], -1, rep, t);
            }
        emit_json("\"rep_done\", \"collective\": \"%s\", \"rep\": %d", opt.collective, rep);
    }
}

