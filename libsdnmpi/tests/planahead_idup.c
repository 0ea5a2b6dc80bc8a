/* planahead_idup.c -- plans made while an MPI_Comm_idup of their own communicator is pending, for
 * planahead_check --comms 3 --rounds N (after the world's calls, if any; --comms 4: the same
 * without the idups, the dups made by MPI_Comm_dup). World size p >= 2.
 *
 * Each round makes a communicator with the MPI library's own MPI_Comm_dup of the world (even
 * rounds: the world's order) or MPI_Comm_split (odd rounds: reversed order, which the leader of a
 * fake-host layout reorders), so that no plan is asked ahead; starts an MPI_Comm_idup of it; runs
 * the communicator's first SDN_MPI_Allreduce (its plan, its private communicator) while the idup is
 * pending; waits; then the idup'ed communicator's first call. Every result is compared with
 * PMPI_Allreduce's, bit for bit (one_call). With the plan's private communicator split from the
 * communicator, Open MPI 4.1.4 may hang here (two context-id agreements on one parent,
 * libsdnmpi/README.md "Known issues"); made on the library's communicator (plan_comm.h) it may
 * not. World rank 0 prints:
 *   planahead_idup: rounds=N idup=I world=W sdn=K group=G split=S
 * I: 1 with the idups; W: where the world's plan's private communicator came from
 * (sdnmpi_test_plan_priv, -1: no plan); each count the least over the ranks, of 2N: K calls whose
 * first path was not PMPI, G plans whose private communicator was a group's creation on the
 * library's communicator (sdnmpi_test_plan_priv = 2), S plans that split their communicator (3). */
#include <mpi.h>
#include <sdnmpi.h>
#include <stdio.h>

#include "check_common.h"
#include "planahead_check.h"
#include "sdnmpi_testing.h"

void idup_check(int count, int rounds, int idup)
{
    int p = 0, sdn = 0, group = 0, split = 0;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &p), "MPI_Comm_size");
    for (int r = 0; r < rounds; r++) {
        MPI_Comm comm = MPI_COMM_NULL, dup = MPI_COMM_NULL;
        MPI_Request req;
        if (r % 2 == 0)
            check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup");
        else
            check_mpi(MPI_Comm_split(MPI_COMM_WORLD, 0, p - check_rank, &comm), "MPI_Comm_split");
        if (idup)
            check_mpi(MPI_Comm_idup(comm, &dup, &req), "MPI_Comm_idup");
        sdn += one_call(comm, count, 100 + (uint64_t)r) != 1; /* 1: PMPI */
        if (idup)
            check_mpi(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
        else
            check_mpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
        sdn += one_call(dup, count, 200 + (uint64_t)r) != 1;
        for (int k = 0; k < 2; k++) {
            int from = sdnmpi_test_plan_priv(k ? dup : comm);
            group += from == 2;
            split += from == 3;
        }
        check_mpi(MPI_Comm_free(&dup), "MPI_Comm_free");
        check_mpi(MPI_Comm_free(&comm), "MPI_Comm_free");
    }
    int mine[3] = {sdn, group, split}, least[3] = {0, 0, 0};
    check_mpi(PMPI_Allreduce(mine, least, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "PMPI_Allreduce");
    if (check_rank == 0)
        printf("planahead_idup: rounds=%d idup=%d world=%d sdn=%d group=%d split=%d\n", rounds,
               idup, sdnmpi_test_plan_priv(MPI_COMM_WORLD), least[0], least[1], least[2]);
}
