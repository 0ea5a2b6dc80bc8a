/* comm_create.c -- SDN_MPI_Comm_dup, SDN_MPI_Comm_split, SDN_MPI_Comm_create: the MPI library's
 * own, then the new communicator's plan requested ahead (plan_ahead.h). */
#include "plan_ahead.h"
#include "sdnmpi.h"

SDNMPI_EXPORT int SDN_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc == MPI_SUCCESS)
        sdnmpi_plan_ahead_comm(comm, *newcomm);
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_split(comm, color, key, newcomm);
    if (rc == MPI_SUCCESS)
        sdnmpi_plan_ahead_comm(comm, *newcomm); /* MPI_UNDEFINED: MPI_COMM_NULL, nothing to do */
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    int rc = PMPI_Comm_create(comm, group, newcomm);
    if (rc == MPI_SUCCESS)
        sdnmpi_plan_ahead_comm(comm, *newcomm); /* not in the group: MPI_COMM_NULL */
    return rc;
}
