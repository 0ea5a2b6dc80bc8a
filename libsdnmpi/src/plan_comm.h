/*
 * plan_comm.h -- the plans' private communicators, made from a communicator only the library
 * owns (issue 17: the first plan and install under 20 ms at p = 8).
 *
 * At SDN_MPI_Init (SDN path on) every rank makes `sdnmpi_g.libworld`: PMPI_Comm_create of
 * MPI_COMM_WORLD's group (not a dup: no application attribute is copied; deferred: an idup,
 * below). The application never sees it, so it never has a communicator creation of its own
 * pending on it, and it is made before the application gets control back, so nothing of the
 * application's is pending on the world either (the preload library's MPI_Init).
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
 * The Bcast state of a communicator (bcast_plan.c) takes its private communicator the same way,
 * always a group's creation (sdnmpi_plan_comm_own), the world's too: its collectives (Allreduce,
 * Allgather, Bcast, Ibcast) then never share a communicator with a plan's traffic on libworld, and
 * its creation's tag comes from the same leader's sequence as the plans'. Without libworld on
 * some rank it duplicates the application's communicator, as before.
 *
 * Fallback: without libworld (the SDN path off, or its creation failed on some rank: every rank
 * ors its own lack into the plan's Allreduce, so all agree), the plan splits the application's
 * communicator as before.
 *
 * Deferred (SDN_MPI_LIB_COMM=defer, not the default: measured, the first collective then pays
 * what Init saves): Init only starts libworld, PMPI_Comm_idup of MPI_COMM_WORLD (no non-blocking
 * create exists), and the first place that needs it completes it (sdnmpi_plan_comm_ready): a
 * plan, the Bcast state, SDN_MPI_Finalize and every communicator creation on MPI_COMM_WORLD the
 * library sees (comm_create.c, preload.c, preload_comm.c). The last is what keeps the hang away:
 * the idup's context-id agreement has the id of any creation on MPI_COMM_WORLD, (0 << 32 | 0) in
 * Open MPI 4.1's comm_cid.c, so both would run their allreduces on the world at once. A linked
 * application's own MPI_Comm_split (...) of MPI_COMM_WORLD is not seen by the library: linked,
 * deferring is for applications that make none before their first SDN collective. The idup copies
 * the attributes of MPI_COMM_WORLD that have a copy callback (the library's own have none; under
 * the preload library the application has set none yet; a linked application's set before
 * SDN_MPI_Init are, and deleted at Finalize).
 */
#ifndef SDNMPI_PLAN_COMM_H
#define SDNMPI_PLAN_COMM_H

#include <mpi.h>

/* The first tag of the group creations on libworld (above every tag of the library's
 * algorithms: SDNMPI_TAG, the hierarchical pipeline's 0x2000 + 0xfff). */
#define SDNMPI_PLAN_COMM_TAG0 0x4000

/* SDN_MPI_LIB_COMM's values (env.h: cfg.lib_comm; world rank 0's, agreed at Init). */
enum { SDNMPI_LIB_COMM_OFF = 0, SDNMPI_LIB_COMM_BLOCK = 1, SDNMPI_LIB_COMM_DEFER = 2 };

/* SDN_MPI_Init, every rank (collective over MPI_COMM_WORLD), once the agreement says the SDN path
 * is on: makes sdnmpi_g.libworld (blocking), or starts it (deferred: sdnmpi_plan_comm_ready
 * completes it), and records SDNMPI_T_INIT_LIBCOMM; on failure leaves it MPI_COMM_NULL (logged).
 * MPI error code. */
int sdnmpi_plan_comm_init(int deferred);

/* Completes a deferred libworld if it is still under way (PMPI_Wait; else a flag's read), so that
 * sdnmpi_g.libworld is final afterwards (MPI_COMM_NULL if the creation failed). Call it before
 * reading sdnmpi_g.libworld and before any communicator creation on MPI_COMM_WORLD. Any thread;
 * one waits, the others block until it is done. Collective in effect: it waits for every world
 * rank to take part in the idup (each does, in any MPI call that progresses). MPI error code. */
int sdnmpi_plan_comm_ready(void);

/* 1 while the deferred creation is under way (not yet completed by sdnmpi_plan_comm_ready). */
int sdnmpi_plan_comm_pending(void);

/* sdnmpi_plan_comm_ready if comm is MPI_COMM_WORLD (a creation on it would share the deferred
 * creation's agreement id), else nothing. */
void sdnmpi_plan_comm_ready_for(MPI_Comm comm);

/* SDN_MPI_Finalize, after the plans are gone: completes libworld if deferred, then frees it.
 * MPI error code. */
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

/* Every rank of comm (collective over comm's ranks, like the above): a private communicator of
 * comm's ranks in comm's order, always a new one (PMPI_Comm_create_group on libworld, under `tag`
 * from comm's rank 0), never libworld itself, the world's included: the Bcast state's
 * (bcast_plan.c), whose collectives must stay apart from the world plan's on libworld. libworld
 * must exist on every rank (agreed: sdnmpi_plan_comm_covers). MPI error code. */
int sdnmpi_plan_comm_own(MPI_Comm comm, int tag, MPI_Comm *priv);

/* *covers = 1 if libworld exists on this rank (call sdnmpi_plan_comm_ready first) and every rank
 * of comm is in this process's MPI_COMM_WORLD (a group difference: no message), so that comm's
 * ranks can make a communicator on libworld; else 0. Each rank's own view: agree on it. MPI
 * error code (then *covers = 0). */
int sdnmpi_plan_comm_covers(MPI_Comm comm, int *covers);

#endif
