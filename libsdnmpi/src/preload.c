/* preload.c -- transparent mode: LD_PRELOAD=libsdnmpi-preload.so puts these in front of the MPI
 * library's own MPI_Init, MPI_Init_thread, MPI_Allreduce, MPI_Bcast and MPI_Finalize. The library itself
 * calls only PMPI_* functions, so nothing here recurses. */
#include "log.h"
#include "sdnmpi.h"

static void init_sdn(void)
{
    int rc = SDN_MPI_Init();
    if (rc != MPI_SUCCESS)
        sdnmpi_warn("SDN_MPI_Init failed with MPI error %d; MPI_Allreduce and MPI_Bcast stay plain",
                    rc);
}

SDNMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        init_sdn();
    return rc;
}

SDNMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
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

SDNMPI_EXPORT int MPI_Finalize(void)
{
    /* MPI_ERR_OTHER here only means SDN_MPI_Init did not complete: nothing to undo. */
    (void)SDN_MPI_Finalize();
    return PMPI_Finalize();
}
