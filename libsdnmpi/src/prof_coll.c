/* prof_coll.c -- the collective wrappers. With the pmpi source they attribute each call to the
 * pairs of its standard algorithm (prof_model.c); with the mpi_t source the MPI library's own
 * point-to-point traffic is counted by pml_monitoring, and these only count the call. Collectives
 * on intercommunicators are not modelled. Nonblocking collectives: prof_icoll.c. */
#include <stdlib.h>

#include "prof.h"
#include "prof_model.h"
#include "sdnmpi.h"

int prof_coll_modelled(MPI_Comm comm, struct prof_coll *c)
{
    if (!prof_g.active)
        return 0;
    prof_count_event();
    if (prof_g.source != PROF_SOURCE_PMPI)
        return 0;
    return prof_comm_ranks(comm, &c->world, &c->n, &c->me) == 0;
}

const uint64_t *prof_coll_blocks(const int *counts, MPI_Datatype type, int n)
{
    static uint64_t *scratch;
    static int cap;
    if (n > cap) {
        uint64_t *grown = realloc(scratch, (size_t)n * sizeof *grown);
        if (grown == NULL)
            return NULL;
        scratch = grown;
        cap = n;
    }
    uint64_t size = prof_bytes(1, type);
    for (int i = 0; i < n; i++)
        scratch[i] = counts[i] > 0 ? (uint64_t)counts[i] * size : 0;
    return scratch;
}

SDNMPI_EXPORT int MPI_Barrier(MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_barrier_dissemination(&c);
    return PMPI_Barrier(comm);
}

SDNMPI_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_bcast_binomial(&c, root, prof_bytes(count, type));
    return PMPI_Bcast(buf, count, type, root, comm);
}

SDNMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             int root, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_reduce_binomial(&c, root, prof_bytes(count, type));
    return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
}

SDNMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_allreduce_recursive_doubling(&c, prof_bytes(count, type));
    return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

SDNMPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_allgather_ring(&c, NULL, prof_bytes(recvcount, recvtype));
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int *recvcounts, const int *displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        const uint64_t *blocks = prof_coll_blocks(recvcounts, recvtype, c.n);
        if (blocks != NULL)
            prof_model_allgather_ring(&c, blocks, 0);
    }
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        uint64_t b = sendbuf == MPI_IN_PLACE ? prof_bytes(recvcount, recvtype) : prof_bytes(sendcount, sendtype);
        prof_model_alltoall_pairwise(&c, NULL, b);
    }
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *rdispls,
                                MPI_Datatype recvtype, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        const uint64_t *blocks = sendbuf == MPI_IN_PLACE ? prof_coll_blocks(recvcounts, recvtype, c.n)
                                                         : prof_coll_blocks(sendcounts, sendtype, c.n);
        if (blocks != NULL)
            prof_model_alltoall_pairwise(&c, blocks, 0);
    }
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_gather_linear(&c, root, prof_bytes(sendcount, sendtype));
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

SDNMPI_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int *recvcounts, const int *displs, MPI_Datatype recvtype, int root,
                              MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_gather_linear(&c, root, prof_bytes(sendcount, sendtype));
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

SDNMPI_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c) && c.me == root)
        prof_model_scatter_linear(&c, root, NULL, prof_bytes(sendcount, sendtype));
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

SDNMPI_EXPORT int MPI_Scatterv(const void *sendbuf, const int *sendcounts, const int *displs,
                               MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               int root, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c) && c.me == root) {
        const uint64_t *blocks = prof_coll_blocks(sendcounts, sendtype, c.n);
        if (blocks != NULL)
            prof_model_scatter_linear(&c, root, blocks, 0);
    }
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

SDNMPI_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts,
                                     MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        const uint64_t *blocks = prof_coll_blocks(recvcounts, type, c.n);
        if (blocks != NULL)
            prof_model_alltoall_pairwise(&c, blocks, 0);
    }
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
}

SDNMPI_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                           MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_alltoall_pairwise(&c, NULL, prof_bytes(recvcount, type));
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
}

SDNMPI_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_scan_recursive_doubling(&c, prof_bytes(count, type));
    return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
}

SDNMPI_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_scan_recursive_doubling(&c, prof_bytes(count, type));
    return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
}
