/* planahead_kinds.c -- the other ways to make a communicator (libsdnmpi/src/comm_create.c), for
 * planahead_check --comms 2 (after the world's calls, if any). World size p >= 4.
 *
 * Made back to back:
 *   shared     SDN_MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, p - rank): under mpirun on one
 *              machine every rank, in reverse order (led by world rank p - 1)
 *   shareddup  SDN_MPI_Comm_dup_with_info(shared) before shared's first collective: shares its
 *              request
 *   undef      SDN_MPI_Comm_split_type(world, rank 0: MPI_UNDEFINED, else MPI_COMM_TYPE_SHARED,
 *              rank): MPI_COMM_NULL on world rank 0, p - 1 ranks (led by world rank 1)
 *   group      SDN_MPI_Comm_create_group(world, {p - 1, 1, 2}), called by those three only; the
 *              other ranks wait for a message its rank 0 sends once it has the communicator, so
 *              a plan-ahead that needed them would hang
 *   dupinfo    SDN_MPI_Comm_dup_with_info(world): the world's routes, or its request
 *   onehost    SDN_MPI_Comm_split(world, the ranks on world rank 1's fake host (SDN_MPI_FAKE_HOSTS
 *              = hosts): what a node's MPI_COMM_TYPE_SHARED split is on a cluster; nothing asked
 *   idup       MPI_Comm_idup(world); while it is pending, one_call on the world (its first, if
 *              the world had none); no plan ahead: its first collective plans
 * then every rank sleeps gap_ms, then the first calls on each (first_calls_report), then an
 * SDN_MPI_Allgather and an SDN_MPI_Reduce (int64 sum, to the last rank) of 64 KiB per rank on each
 * against PMPI_Allgather / PMPI_Reduce, bit for bit. */
#include <mpi.h>
#include <sdnmpi.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "planahead_check.h"

enum { N_SHARED, N_SHAREDDUP, N_UNDEF, N_GROUP, N_DUPINFO, N_ONEHOST, N_IDUP, N_N };
static const char *const names[N_N] = {"shared", "shareddup", "undef", "group", "dupinfo",
                                       "onehost", "idup"};

#define MORE_COUNT 8192 /* int64 per rank: 64 KiB, at least SDN_MPI_MIN_BYTES by default */

/* SDN_MPI_Allgather and SDN_MPI_Reduce on comm against PMPI's, bit for bit. */
static void more_calls(MPI_Comm comm, uint64_t seed)
{
    int p = 0, rank = -1;
    check_mpi(MPI_Comm_size(comm, &p), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    size_t n = MORE_COUNT, all = (size_t)p * n;
    int64_t *mine = xmalloc(n * sizeof *mine), *got = xmalloc(all * sizeof *got);
    int64_t *want = xmalloc(all * sizeof *want);
    uint64_t st = seed + (uint64_t)check_rank * 104729u;
    for (size_t i = 0; i < n; i++)
        mine[i] = (int64_t)(check_splitmix(&st) >> 12) - (INT64_C(1) << 50);
    memset(got, 0x5a, all * sizeof *got);
    check_mpi(SDN_MPI_Allgather(mine, MORE_COUNT, MPI_INT64_T, got, MORE_COUNT, MPI_INT64_T, comm),
              "SDN_MPI_Allgather");
    check_mpi(PMPI_Allgather(mine, MORE_COUNT, MPI_INT64_T, want, MORE_COUNT, MPI_INT64_T, comm),
              "PMPI_Allgather");
    if (memcmp(got, want, all * sizeof *got) != 0)
        FAIL("SDN_MPI_Allgather on %d ranks differs from PMPI_Allgather's", p);
    memset(got, 0x5a, n * sizeof *got);
    check_mpi(SDN_MPI_Reduce(mine, got, MORE_COUNT, MPI_INT64_T, MPI_SUM, p - 1, comm),
              "SDN_MPI_Reduce");
    check_mpi(PMPI_Reduce(mine, want, MORE_COUNT, MPI_INT64_T, MPI_SUM, p - 1, comm),
              "PMPI_Reduce");
    if (rank == p - 1 && memcmp(got, want, n * sizeof *got) != 0)
        FAIL("SDN_MPI_Reduce on %d ranks differs from PMPI_Reduce's", p);
    free(mine), free(got), free(want);
}

/* group: made by world ranks p - 1, 1, 2 alone; the others wait until it exists. */
static MPI_Comm make_group(int p)
{
    MPI_Group world, members;
    MPI_Comm comm = MPI_COMM_NULL;
    const int ranks[3] = {p - 1, 1, 2};
    int in = check_rank == p - 1 || check_rank == 1 || check_rank == 2, token = 0;
    check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
    check_mpi(MPI_Group_incl(world, 3, ranks, &members), "MPI_Group_incl");
    if (in) {
        check_mpi(SDN_MPI_Comm_create_group(MPI_COMM_WORLD, members, 17, &comm),
                  "SDN_MPI_Comm_create_group");
        for (int r = 0; check_rank == p - 1 && r < p; r++)
            if (r != p - 1 && r != 1 && r != 2)
                check_mpi(MPI_Send(&token, 1, MPI_INT, r, 18, MPI_COMM_WORLD), "MPI_Send");
    } else {
        check_mpi(MPI_Recv(&token, 1, MPI_INT, p - 1, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                  "MPI_Recv");
    }
    check_mpi(MPI_Group_free(&members), "MPI_Group_free");
    check_mpi(MPI_Group_free(&world), "MPI_Group_free");
    return comm;
}

void kinds_check(int count, long gap_ms, int hosts)
{
    int p = 0;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &p), "MPI_Comm_size");
    if (p < 4 || hosts < 1) {
        FAIL("--comms 2 needs 4 ranks or more and --hosts N (got %d ranks, %d hosts)", p, hosts);
        return;
    }
    MPI_Comm comms[N_N];
    MPI_Info info;
    MPI_Request req;
    check_mpi(MPI_Info_create(&info), "MPI_Info_create");
    check_mpi(MPI_Info_set(info, "sdnmpi_check", "1"), "MPI_Info_set");
    check_mpi(SDN_MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p - check_rank,
                                      MPI_INFO_NULL, &comms[N_SHARED]), "SDN_MPI_Comm_split_type");
    check_mpi(SDN_MPI_Comm_dup_with_info(comms[N_SHARED], info, &comms[N_SHAREDDUP]),
              "SDN_MPI_Comm_dup_with_info");
    check_mpi(SDN_MPI_Comm_split_type(MPI_COMM_WORLD,
                                      check_rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED,
                                      check_rank, MPI_INFO_NULL, &comms[N_UNDEF]),
              "SDN_MPI_Comm_split_type");
    comms[N_GROUP] = make_group(p);
    check_mpi(SDN_MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comms[N_DUPINFO]),
              "SDN_MPI_Comm_dup_with_info");
    check_mpi(SDN_MPI_Comm_split(MPI_COMM_WORLD,
                                 check_rank % hosts == 1 % hosts ? 0 : MPI_UNDEFINED, check_rank,
                                 &comms[N_ONEHOST]), "SDN_MPI_Comm_split");
    check_mpi(MPI_Comm_idup(MPI_COMM_WORLD, &comms[N_IDUP], &req), "MPI_Comm_idup");
    (void)one_call(MPI_COMM_WORLD, count, 11); /* the parent's collectives go on meanwhile */
    check_mpi(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    check_mpi(MPI_Info_free(&info), "MPI_Info_free");
    int size = 0;
    check_mpi(MPI_Comm_size(comms[N_SHARED], &size), "MPI_Comm_size");
    if (size != p)
        FAIL("the MPI_COMM_TYPE_SHARED split has %d ranks, not %d (one machine)", size, p);
    if ((check_rank == 0) != (comms[N_UNDEF] == MPI_COMM_NULL))
        FAIL("the MPI_UNDEFINED split_type gave %s",
             comms[N_UNDEF] == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    if (gap_ms > 0)
        sleep_ms(gap_ms);

    first_calls_report(N_N, names, comms, count);
    for (int k = 0; k < N_N; k++) {
        if (comms[k] != MPI_COMM_NULL) {
            more_calls(comms[k], 20 + (uint64_t)k);
            check_mpi(MPI_Comm_free(&comms[k]), "MPI_Comm_free");
        }
    }
}
