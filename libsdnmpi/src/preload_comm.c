/* preload_comm.c -- transparent mode: the communicator creations on MPI_COMM_WORLD that preload.c
 * does not plan ahead, wrapped only to complete the library's communicator first if it is still
 * under way (SDN_MPI_LIB_COMM=defer, opt-in; plan_comm.h): each makes its
 * communicator with a context-id agreement on its parent, which on MPI_COMM_WORLD would have the
 * deferred creation's id. MPI_Win_* and MPI_File_open duplicate their communicator inside Open
 * MPI; MPI_Intercomm_create agrees on its local communicator (and talks on the bridge). Then the
 * MPI library's own function, unchanged. */
#include "plan_comm.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"

/* Test hook (sdnmpi_testing.h), exported by the preload library alone. */
SDNMPI_EXPORT int sdnmpi_test_libworld_pending(void)
{
    return sdnmpi_plan_comm_pending();
}

SDNMPI_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Comm_idup(comm, newcomm, request);
}

SDNMPI_EXPORT int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[],
                                  int reorder, MPI_Comm *comm_cart)
{
    sdnmpi_plan_comm_ready_for(old_comm);
    return PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart);
}

SDNMPI_EXPORT int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                                   int reorder, MPI_Comm *comm_graph)
{
    sdnmpi_plan_comm_ready_for(comm_old);
    return PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
}

SDNMPI_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                                        const int targets[], const int weights[], MPI_Info info,
                                        int reorder, MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm_old);
    return PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder,
                                  newcomm);
}

SDNMPI_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                 const int sourceweights[], int outdegree,
                                                 const int destinations[], const int destweights[],
                                                 MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    sdnmpi_plan_comm_ready_for(comm_old);
    return PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree,
                                           destinations, destweights, info, reorder,
                                           comm_dist_graph);
}

SDNMPI_EXPORT int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm,
                                       int remote_leader, int tag, MPI_Comm *newintercomm)
{
    sdnmpi_plan_comm_ready_for(local_comm);
    sdnmpi_plan_comm_ready_for(bridge_comm);
    return PMPI_Intercomm_create(local_comm, local_leader, bridge_comm, remote_leader, tag,
                                 newintercomm);
}

SDNMPI_EXPORT int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                                 MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes);
}

SDNMPI_EXPORT int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                          const int array_of_maxprocs[], const MPI_Info array_of_info[],
                                          int root, MPI_Comm comm, MPI_Comm *intercomm,
                                          int array_of_errcodes[])
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs,
                                    array_of_info, root, comm, intercomm, array_of_errcodes);
}

SDNMPI_EXPORT int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                  MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Comm_accept(port_name, info, root, comm, newcomm);
}

SDNMPI_EXPORT int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                                   MPI_Comm *newcomm)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Comm_connect(port_name, info, root, comm, newcomm);
}

SDNMPI_EXPORT int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                 MPI_Win *win)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Win_create(base, size, disp_unit, info, comm, win);
}

SDNMPI_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                   void *baseptr, MPI_Win *win)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
}

SDNMPI_EXPORT int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                          void *baseptr, MPI_Win *win)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
}

SDNMPI_EXPORT int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_Win_create_dynamic(info, comm, win);
}

SDNMPI_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                                MPI_File *fh)
{
    sdnmpi_plan_comm_ready_for(comm);
    return PMPI_File_open(comm, filename, amode, info, fh);
}
