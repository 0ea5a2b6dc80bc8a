/* prof_p2p.c -- the point-to-point wrappers: every send counts its message for its destination's
 * world rank (the size histogram always, the matrices with the pmpi source). Receives count
 * nothing here: rx_* come from the senders' counts at the end (prof_init.c), so MPI_ANY_SOURCE,
 * cancelled or unmatched receives cannot skew them. */
#include "prof.h"
#include "sdnmpi.h"

static void send_event(MPI_Comm comm, int dest, int count, MPI_Datatype type)
{
    if (!prof_g.active)
        return;
    prof_count_event();
    prof_send(comm, dest, prof_bytes(count, type));
}

SDNMPI_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    send_event(comm, dest, count, type);
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

SDNMPI_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    send_event(comm, dest, count, type);
    return PMPI_Bsend(buf, count, type, dest, tag, comm);
}

SDNMPI_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    send_event(comm, dest, count, type);
    return PMPI_Ssend(buf, count, type, dest, tag, comm);
}

SDNMPI_EXPORT int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    send_event(comm, dest, count, type);
    return PMPI_Rsend(buf, count, type, dest, tag, comm);
}

SDNMPI_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                            MPI_Request *req)
{
    send_event(comm, dest, count, type);
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

SDNMPI_EXPORT int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *req)
{
    send_event(comm, dest, count, type);
    return PMPI_Ibsend(buf, count, type, dest, tag, comm, req);
}

SDNMPI_EXPORT int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *req)
{
    send_event(comm, dest, count, type);
    return PMPI_Issend(buf, count, type, dest, tag, comm, req);
}

SDNMPI_EXPORT int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                             MPI_Request *req)
{
    send_event(comm, dest, count, type);
    return PMPI_Irsend(buf, count, type, dest, tag, comm, req);
}

SDNMPI_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                               MPI_Comm comm, MPI_Status *status)
{
    send_event(comm, dest, sendcount, sendtype);
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                         recvtag, comm, status);
}

SDNMPI_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                                       int recvtag, MPI_Comm comm, MPI_Status *status)
{
    send_event(comm, dest, count, type);
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
}
