/* comm_create.c -- SDN_MPI_Comm_dup, SDN_MPI_Comm_dup_with_info, SDN_MPI_Comm_split,
 * SDN_MPI_Comm_split_type, SDN_MPI_Comm_create, SDN_MPI_Comm_create_group: the MPI library's own,
 * then the new communicator's plan requested ahead (plan_ahead.h). MPI_Comm_idup has none: its
 * communicator is not valid before its request completes, so its first collective plans
 * (libsdnmpi/README.md, "MPI_Comm_idup: no plan-ahead, by design").
 * Each first completes the library's communicator if it is still under way and comm is
 * MPI_COMM_WORLD (plan_comm.h: the two creations would share Open MPI's agreement id). */
#include "plan_ahead.h"
#include "plan_comm.h"
#include "sdnmpi.h"

/* The MPI call's return code rc; on success, the plan of *newcomm (made from parent) requested
 * ahead. MPI_COMM_NULL (MPI_UNDEFINED split, not in the group): nothing to do. Local: a
 * communicator made by a subset of parent's ranks (MPI_Comm_create_group) asks nothing of the
 * others. */
static int made(int rc, MPI_Comm parent, const MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        sdnmpi_plan_ahead_comm(parent, *newcomm);
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_dup(comm, newcomm), comm, newcomm);
}

SDNMPI_EXPORT int SDN_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_dup_with_info(comm, info, newcomm), comm, newcomm);
}

SDNMPI_EXPORT int SDN_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_split(comm, color, key, newcomm), comm, newcomm);
}

SDNMPI_EXPORT int SDN_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                          MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), comm, newcomm);
}

SDNMPI_EXPORT int SDN_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_create(comm, group, newcomm), comm, newcomm);
}

SDNMPI_EXPORT int SDN_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                            MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return made(PMPI_Comm_create_group(comm, group, tag, newcomm), comm, newcomm);
}
