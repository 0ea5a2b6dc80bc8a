/* planahead_comms.c -- communicators whose plans are requested at their creation
 * (libsdnmpi/src/plan_ahead.h), for planahead_check --comms 1 (after the world's calls).
 *
 * Made back to back, through the library's SDN_MPI_Comm_split / SDN_MPI_Comm_dup:
 *   unused    split(world, 0, p - rank): every rank in reverse order; freed before any collective
 *   split0/1  split(world, rank % 2, p - rank): each color in reverse order (led by its last rank)
 *   sub       split(world, rank 0: MPI_UNDEFINED, else 0, rank): MPI_COMM_NULL on world rank 0
 *   splitdup  dup(split) before split's first collective: shares split's request
 *   dup       dup(world): the world's routes if its plan is made, else its request (no request)
 * then every rank sleeps gap_ms, then one_call on split, sub, splitdup, dup (bit for bit against
 * PMPI_Allreduce). World rank 0 prints, for each communicator, what its rank 0 saw:
 *   planahead_comm: name=N leader=W path=A ahead=X age=S
 * (leader: its world rank; path: the first call's, as sdnmpi_test_last_path; ahead, age: the
 * plan's timing slots plan_ahead, plan_ahead_age). */
#include <mpi.h>
#include <sdnmpi.h>
#include <stdio.h>

#include "check_common.h"
#include "planahead_check.h"

enum { C_SPLIT0, C_SPLIT1, C_SUB, C_SPLITDUP0, C_SPLITDUP1, C_DUP, C_N };
static const char *const names[C_N] = {"split0", "split1", "sub", "splitdup0", "splitdup1", "dup"};

/* The first calls on comm (slot k); its rank 0 records what it saw into seen[k] (leader, path,
 * ahead, age). */
static void first_calls(MPI_Comm comm, int k, int count, double seen[][4])
{
    int rank = -1;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    int path = one_call(comm, count, 3 + (uint64_t)k);
    if (rank == 0) {
        seen[k][0] = check_rank;
        seen[k][1] = path;
        seen[k][2] = slot("plan_ahead");
        seen[k][3] = slot("plan_ahead_age");
    }
}

void first_calls_report(int n, const char *const *label, const MPI_Comm *comms, int count)
{
    double seen[MAX_REPORTED][4], all[MAX_REPORTED][4];
    if (n > MAX_REPORTED) {
        FAIL("%d communicators to report, at most %d", n, MAX_REPORTED);
        n = MAX_REPORTED;
    }
    for (int k = 0; k < MAX_REPORTED; k++)
        for (int i = 0; i < 4; i++)
            seen[k][i] = -1.0;
    for (int k = 0; k < n; k++)
        if (comms[k] != MPI_COMM_NULL)
            first_calls(comms[k], k, count, seen);
    check_mpi(PMPI_Reduce(seen, all, n * 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD),
              "PMPI_Reduce");
    for (int k = 0; check_rank == 0 && k < n; k++)
        printf("planahead_comm: name=%s leader=%d path=%d ahead=%g age=%.6f\n", label[k],
               (int)all[k][0], (int)all[k][1], all[k][2], all[k][3]);
}

void comms_check(int count, long gap_ms)
{
    int p = 0;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &p), "MPI_Comm_size");
    MPI_Comm unused, split, sub, splitdup, dup;
    check_mpi(SDN_MPI_Comm_split(MPI_COMM_WORLD, 0, p - check_rank, &unused), "SDN_MPI_Comm_split");
    check_mpi(SDN_MPI_Comm_split(MPI_COMM_WORLD, check_rank % 2, p - check_rank, &split),
              "SDN_MPI_Comm_split");
    check_mpi(SDN_MPI_Comm_split(MPI_COMM_WORLD, check_rank == 0 ? MPI_UNDEFINED : 0, check_rank,
                                 &sub), "SDN_MPI_Comm_split");
    check_mpi(SDN_MPI_Comm_dup(split, &splitdup), "SDN_MPI_Comm_dup");
    check_mpi(SDN_MPI_Comm_dup(MPI_COMM_WORLD, &dup), "SDN_MPI_Comm_dup");
    check_mpi(MPI_Comm_free(&unused), "MPI_Comm_free");
    if ((check_rank == 0) != (sub == MPI_COMM_NULL))
        FAIL("the MPI_UNDEFINED split gave %s",
             sub == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (gap_ms > 0)
        sleep_ms(gap_ms);

    int color = check_rank % 2;
    MPI_Comm comms[C_N] = {MPI_COMM_NULL, MPI_COMM_NULL, sub, MPI_COMM_NULL, MPI_COMM_NULL, dup};
    comms[C_SPLIT0 + color] = split;
    comms[C_SPLITDUP0 + color] = splitdup;
    first_calls_report(C_N, names, comms, count);
    check_mpi(MPI_Comm_free(&split), "MPI_Comm_free");
    check_mpi(MPI_Comm_free(&splitdup), "MPI_Comm_free");
    check_mpi(MPI_Comm_free(&dup), "MPI_Comm_free");
    if (sub != MPI_COMM_NULL)
        check_mpi(MPI_Comm_free(&sub), "MPI_Comm_free");
}
