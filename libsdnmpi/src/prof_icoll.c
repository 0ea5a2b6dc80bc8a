/* prof_icoll.c -- the nonblocking collective wrappers: counted like their blocking versions
 * (prof_coll.c), when they are started. */
#include "prof.h"
#include "prof_model.h"
#include "sdnmpi.h"

SDNMPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_barrier_dissemination(&c);
    return PMPI_Ibarrier(comm, req);
}

SDNMPI_EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_bcast_binomial(&c, root, prof_bytes(count, type));
    return PMPI_Ibcast(buf, count, type, root, comm, req);
}

SDNMPI_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_reduce_binomial(&c, root, prof_bytes(count, type));
    return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, req);
}

SDNMPI_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_allreduce_recursive_doubling(&c, prof_bytes(count, type));
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
}

SDNMPI_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c))
        prof_model_allgather_ring(&c, NULL, prof_bytes(recvcount, recvtype));
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

SDNMPI_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        uint64_t b = sendbuf == MPI_IN_PLACE ? prof_bytes(recvcount, recvtype) : prof_bytes(sendcount, sendtype);
        prof_model_alltoall_pairwise(&c, NULL, b);
    }
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req);
}

SDNMPI_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls,
                                 MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *rdispls,
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req)
{
    struct prof_coll c;
    if (prof_coll_modelled(comm, &c)) {
        const uint64_t *blocks = sendbuf == MPI_IN_PLACE ? prof_coll_blocks(recvcounts, recvtype, c.n)
                                                         : prof_coll_blocks(sendcounts, sendtype, c.n);
        if (blocks != NULL)
            prof_model_alltoall_pairwise(&c, blocks, 0);
    }
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                           req);
}
