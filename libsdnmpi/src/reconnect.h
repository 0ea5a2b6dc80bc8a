/*
 * reconnect.h -- a new registration of the job after world rank 0 lost the connection that
 * registered it (the controller was restarted, or closed the connection).
 *
 * The controller releases a job when the connection that registered it closes, and a restarted
 * controller knows no job at all; the job's id and token are then worthless. World rank 0 owns the
 * registration: it notices the loss (sdnmpi_conn_alive), registers the job again with the same
 * host list, with the connection's back-off and limit (controller.h), and offers the new id and
 * token to every rank. Every rank must switch at the same point, or the ranks of a communicator
 * would decide differently (one asks for a plan, another runs the cached one) and deadlock. So the
 * offer is broadcast from world rank 0 in an agreement step of SDN_MPI_Allreduce and SDN_MPI_Bcast
 * on communicators whose group is MPI_COMM_WORLD's in the same order (every 8th such call): MPI
 * requires every rank to make its collective calls in an order that cannot deadlock, so every rank
 * passes the same agreement steps between any two calls on any communicator it shares with
 * another rank. After a switch, a communicator's cached plan and Bcast trees (routes of the old
 * registration) are dropped, on all its ranks at the same call, and made again on the next one;
 * every connection of the other ranks is reset (their next request connects anew).
 *
 * Not under MPI_THREAD_MULTIPLE (world rank 0's level, agreed at SDN_MPI_Init): there two threads
 * may call on two world-spanning communicators at once, in another order on each rank, and a
 * process-wide count of calls would put the agreement steps on different communicators on
 * different ranks (a hang). Such a job has no agreement steps: it keeps its first registration,
 * as a job whose world rank 0 never gets the registration back does (below).
 *
 * The call in flight when the controller goes keeps its path (cached routes, or the fallback of a
 * failed request); every result stays exact. A job whose world rank 0 never gets the
 * registration back, or that makes no SDN call on a world-spanning communicator, keeps its cached
 * plans (on whatever routes the fabric has) and falls back wherever it asks for a new one.
 */
#ifndef SDNMPI_RECONNECT_H
#define SDNMPI_RECONNECT_H

#include <mpi.h>

/* How many SDN calls on world-spanning communicators there are per agreement step. The steps
 * are the 1st, 9th, 17th, ... such calls. (Moving the first to the 8th call gained nothing
 * measurable on the start-up path and left fewer world collectives before the first plan's split:
 * plan.c, libsdnmpi/README.md "Known issues".) */
#define SDNMPI_AGREE_EVERY 8

/* Whether the n-th SDN call on world-spanning communicators (n = 0, 1, ...) is an agreement
 * step. */
#define SDNMPI_AGREE_AT(n) ((n) % SDNMPI_AGREE_EVERY == 0)

/* The keyval of the per-communicator stamp (SDN_MPI_Init / SDN_MPI_Finalize). MPI error codes. */
int sdnmpi_reconnect_keyval_create(void);
int sdnmpi_reconnect_keyval_free(void);

/* Called by the collectives on comm once the call is known to take the SDN path if it can, before
 * they read their cached plan or tree; the same on every rank of comm (collective over comm on
 * an agreement step). Agrees on a new registration if this is an agreement step, then drops
 * comm's caches if they belong to an older registration. MPI error code. */
int sdnmpi_reconnect_point(MPI_Comm comm);

#endif
