/*
 * plan_comm.h -- the plans' private communicators, made from a communicator only the library
 * owns (issue 17: the first plan and install under 20 ms at p = 8).
 *
 * At SDN_MPI_Init (SDN path on) every rank makes `sdnmpi_g.libworld`: PMPI_Comm_create of
 * MPI_COMM_WORLD's group (not a dup: no application attribute is copied). The application never
 * sees it, so it never has a communicator creation of its own pending on it, and it is made
 * before the application gets control back, so nothing of the application's is pending on the
 * world either (the preload library's MPI_Init).
 *
 * A plan's private communicator (plan.c) is then
 *   - MPI_COMM_WORLD's plan, ranks in the world's own order: libworld itself (nothing to make;
 *     shared, never freed by the plan). The library's algorithms use tags below
 *     SDNMPI_PLAN_COMM_TAG0, the group creations below use tags from it on: they never match.
 *   - any other plan: PMPI_Comm_create_group(libworld, the ranks in the plan's order, tag), a
 *     collective over the plan's ranks alone. Its context-id agreement runs on libworld, with
 *     point-to-point messages under `tag`, so it never races a context-id agreement on the
 *     application's communicator (Open MPI 4.1.4 hangs when an MPI_Comm_split, MPI_Comm_create,
 *     ... of a communicator runs while an MPI_Comm_idup of the same one is pending:
 *     libsdnmpi/README.md, "Known issues"); the split of the application's communicator did.
 *     Open MPI orders concurrent agreements by (parent's context id, tag): two on different
 *     parents never share messages, and one on libworld waits while the application's idup of
 *     the world (a lower id) completes.
 * The tag comes from the plan's leader (sdnmpi_plan_comm_tag_locked), so that two plans in flight
 * at once (threads) on overlapping groups never mix their messages.
 *
 * Fallback: without libworld (the SDN path off, or its creation failed on some rank: every rank
 * ors its own lack into the plan's Allreduce, so all agree), the plan splits the application's
 * communicator as before.
 */
#ifndef SDNMPI_PLAN_COMM_H
#define SDNMPI_PLAN_COMM_H

#include <mpi.h>

/* The first tag of the group creations on libworld (above every tag of the library's
 * algorithms: SDNMPI_TAG, the hierarchical pipeline's 0x2000 + 0xfff). */
#define SDNMPI_PLAN_COMM_TAG0 0x4000

/* SDN_MPI_Init, every rank (collective over MPI_COMM_WORLD): makes sdnmpi_g.libworld (and
 * records SDNMPI_T_INIT_LIBCOMM); on failure leaves it MPI_COMM_NULL. MPI error code. */
int sdnmpi_plan_comm_init(void);

/* SDN_MPI_Finalize, after the plans are gone: frees libworld. MPI error code. */
int sdnmpi_plan_comm_free(void);

/* The leader of a plan, with sdnmpi_g.lock held: the tag of its private communicator's creation
 * (SDNMPI_PLAN_COMM_TAG0 .. MPI_TAG_UB; a new one for every plan this process leads, different
 * from those other leaders choose until the range wraps around). */
int sdnmpi_plan_comm_tag_locked(void);

/* Every rank of comm's plan (p ranks; collective over them): the private communicator, ranks in
 * the order `order` (position -> rank in comm; NULL: comm's own). libworld must exist on every
 * rank (agreed). *shared = 1 if *priv is libworld itself (MPI_COMM_WORLD in its own order: never
 * free it). MPI error code. */
int sdnmpi_plan_comm_make(MPI_Comm comm, int p, const int *order, int tag, MPI_Comm *priv,
                          int *shared);

#endif
