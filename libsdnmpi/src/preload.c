/* preload.c -- transparent mode: LD_PRELOAD=libsdnmpi-preload.so puts these in front of the MPI
 * library's own MPI_Init, MPI_Init_thread, MPI_Allreduce, MPI_Bcast, MPI_Pcontrol and MPI_Finalize
 * (and MPI_Allgather, MPI_Reduce, MPI_Alltoall, and MPI_Comm_dup, MPI_Comm_dup_with_info,
 * MPI_Comm_split, MPI_Comm_split_type, MPI_Comm_create, MPI_Comm_create_group, which plan the new
 * communicator's routes ahead; MPI_Comm_idup is not wrapped: its communicator is planned by its
 * first collective, comm_create.c; it and the other creations are in preload_comm.c).
 * The library itself calls only PMPI_* functions, so nothing here recurses. MPI_Init,
 * MPI_Init_thread, MPI_Pcontrol and MPI_Finalize call the next definition (chain.h), so that the
 * profiler preloaded next to this library sees them too. */
#include "chain.h"
#include "log.h"
#include "sdnmpi.h"

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*pcontrol_fn)(const int, ...);
typedef int (*finalize_fn)(void);

static void init_sdn(void)
{
    int rc = SDN_MPI_Init();
    if (rc != MPI_SUCCESS)
        sdnmpi_warn("SDN_MPI_Init failed with MPI error %d; MPI_Allreduce and MPI_Bcast stay plain",
                    rc);
}

SDNMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    init_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Init");
    int rc = next != NULL ? next(argc, argv) : PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        init_sdn();
    return rc;
}

SDNMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_thread_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Init_thread");
    int rc = next != NULL ? next(argc, argv, required, provided)
                          : PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        init_sdn();
    return rc;
}

SDNMPI_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return SDN_MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

SDNMPI_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return SDN_MPI_Bcast(buffer, count, datatype, root, comm);
}

SDNMPI_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return SDN_MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, int root, MPI_Comm comm)
{
    return SDN_MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

SDNMPI_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return SDN_MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SDNMPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_dup(comm, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_split(comm, color, key, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_create(comm, group, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_dup_with_info(comm, info, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                      MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_split_type(comm, split_type, key, info, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    return SDN_MPI_Comm_create_group(comm, group, tag, newcomm);
}

/* MPI_Pcontrol(k): the phase (SDN_MPI_Phase: phase.h and the `phase` op), then the next
 * definition with `level` alone (the MPI standard leaves the variadic arguments to the tools;
 * none of ours use them). */
SDNMPI_EXPORT int MPI_Pcontrol(const int level, ...)
{
    (void)SDN_MPI_Phase(level); /* out of range: a warning, nothing else */
    pcontrol_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Pcontrol");
    return next != NULL ? next(level) : MPI_SUCCESS;
}

SDNMPI_EXPORT int MPI_Finalize(void)
{
    /* MPI_ERR_OTHER here only means SDN_MPI_Init did not complete: nothing to undo. */
    (void)SDN_MPI_Finalize();
    finalize_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Finalize");
    return next != NULL ? next() : PMPI_Finalize();
}
