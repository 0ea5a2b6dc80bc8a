/*
 * sdnmpi.h -- SDN-enhanced MPI collectives.
 *
 * Before the first allreduce on a communicator, the library asks the sdnmpi controller to install
 * balanced routes for the host pairs of the allreduce's communication schedule (docs/rpc.md); the
 * data then moves over those routes. Before the first large bcast from a root, it asks for a
 * multicast tree from the root's host to every member host. Whenever the controller cannot help
 * (not configured, unreachable, slow, an error, a dead connection) the library falls back to the
 * MPI library's own MPI_Allreduce / MPI_Bcast, and the job carries on.
 *
 * Usage:  MPI_Init(...); SDN_MPI_Init(); ... SDN_MPI_Allreduce(...), SDN_MPI_Bcast(...) ...;
 *         SDN_MPI_Finalize();
 *         MPI_Finalize();
 * Or, for an unmodified program, LD_PRELOAD libsdnmpi-preload.so (see libsdnmpi/README.md).
 *
 * Build:  mpicc app.c $(pkg-config --cflags --libs sdnmpi)
 */
#ifndef SDNMPI_H
#define SDNMPI_H

#include <mpi.h>

#if defined(__GNUC__) && __GNUC__ >= 4
#define SDNMPI_EXPORT __attribute__((visibility("default")))
#else
#define SDNMPI_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Collective over MPI_COMM_WORLD; call after MPI_Init/MPI_Init_thread. Registers the job with the
 * controller named by SDN_MPI_CONTROLLER (host:port). Returns MPI_SUCCESS also when the SDN path
 * is unavailable (every allreduce then falls back to the MPI library); MPI_ERR_OTHER if MPI is
 * not initialised or SDN_MPI_Init was already called (a second call changes nothing); an MPI
 * error code if an MPI call failed.
 */
SDNMPI_EXPORT int SDN_MPI_Init(void);

/*
 * Collective over MPI_COMM_WORLD; call before MPI_Finalize. Releases the job on the controller
 * and closes the connections. Returns MPI_SUCCESS, or MPI_ERR_OTHER if SDN_MPI_Init did not run
 * or SDN_MPI_Finalize already ran.
 */
SDNMPI_EXPORT int SDN_MPI_Finalize(void);

/*
 * Exactly MPI_Allreduce. Uses SDN-routed recursive doubling, Rabenseifner's or the hierarchical
 * algorithm for predefined commutative operations on predefined datatypes over intracommunicators
 * from SDN_MPI_MIN_BYTES (unset: 2 KiB) on, and PMPI_Allreduce otherwise (also when called before
 * SDN_MPI_Init or after SDN_MPI_Finalize).
 * Every rank of the communicator gets a bit-identical result.
 */
SDNMPI_EXPORT int SDN_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

/*
 * Exactly MPI_Bcast. Large contiguous messages on an intracommunicator go over a multicast tree
 * the controller installs for the (communicator, root): the root sends each UDP datagram once,
 * paced, and the switches copy it where the tree branches; receivers report what they miss, the
 * root sends it again, and after SDN_MPI_BCAST_ROUNDS rounds PMPI_Bcast finishes the rest. Small
 * messages, non-contiguous datatypes, no controller and any failure use PMPI_Bcast (also before
 * SDN_MPI_Init and after SDN_MPI_Finalize). Every rank ends with the root's bytes, bit for bit.
 */
SDNMPI_EXPORT int SDN_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm);

/*
 * Exactly MPI_Allgather. Contiguous blocks on an intracommunicator of p > 1 ranks, at least
 * SDN_MPI_MIN_BYTES in all (unset: 64 KiB; also for Reduce and Alltoall; set, 0 included, it is
 * every collective's threshold), move over the allreduce plan's routes: recursive doubling on its
 * pairs when p is a power of two, else a ring over the ranks ordered leaf by leaf. Anything else
 * (non-contiguous datatypes on some rank, no controller, before SDN_MPI_Init, ...) uses
 * PMPI_Allgather. MPI_IN_PLACE works. Every rank ends with the same bytes as PMPI_Allgather's.
 */
SDNMPI_EXPORT int SDN_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm);

/*
 * Exactly MPI_Reduce. Predefined commutative operations on predefined datatypes, count >= the
 * largest power of two <= p: reduce-scatter by recursive halving and a gather to the root, over
 * the allreduce plan's routes; PMPI_Reduce otherwise (as SDN_MPI_Allreduce decides).
 */
SDNMPI_EXPORT int SDN_MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);

/*
 * Exactly MPI_Alltoall. Contiguous blocks on an intracommunicator: a pairwise exchange whose p - 1
 * steps (each a permutation) the controller routes step by step without contention (planner
 * `sdn-optimal`, asked once per communicator); PMPI_Alltoall otherwise, and unless SDN_MPI_MIN_BYTES
 * is set (slower than Open MPI when measured, libsdnmpi/README.md). MPI_IN_PLACE works.
 */
SDNMPI_EXPORT int SDN_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm);

/*
 * Exactly MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create (collective over comm, like them; every
 * rank of comm calls the SDN_MPI_ version, or none does). Then the new communicator's rank 0 asks
 * the controller for its allreduce routes without waiting for the answer (SDN_MPI_PLAN_AHEAD=1,
 * the default), so that they are being installed while the application works and its first
 * collective finds them (libsdnmpi/README.md); a communicator with the same group, in the same
 * order, as one whose plan is made (a dup) reuses that plan's routes. Never fails on the
 * controller's account: the first collective then falls back as it would have anyway.
 */
SDNMPI_EXPORT int SDN_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
SDNMPI_EXPORT int SDN_MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
SDNMPI_EXPORT int SDN_MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);

/*
 * Exactly MPI_Comm_dup_with_info: as SDN_MPI_Comm_dup (the new communicator reuses its parent's
 * routes, or shares its request ahead; the info changes nothing of that).
 */
SDNMPI_EXPORT int SDN_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);

/*
 * Exactly MPI_Comm_split_type (any split_type; MPI_UNDEFINED gives MPI_COMM_NULL and asks
 * nothing): as SDN_MPI_Comm_split. A communicator whose ranks are all on one host (a node's
 * MPI_COMM_TYPE_SHARED split) needs no routes: nothing is asked.
 */
SDNMPI_EXPORT int SDN_MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                          MPI_Comm *newcomm);

/*
 * Exactly MPI_Comm_create_group: collective over the members of group only (the other ranks of
 * comm need not call anything); its plan-ahead is local to the new communicator's rank 0, as for
 * the others. There is no SDN_MPI_Comm_idup: MPI_Comm_idup's communicator is not valid before its
 * request completes, so its first collective plans it (libsdnmpi/README.md).
 */
SDNMPI_EXPORT int SDN_MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                                            MPI_Comm *newcomm);

/*
 * Traffic-aware job routing (libsdnmpi/README.md, "Traffic hints and phases").
 *
 * Local (not collective). Tells the controller that this rank will send about `bytes` (>= 1) to
 * rank `peer` of comm (of its remote group for an intercommunicator), in the current phase
 * (SDN_MPI_Phase / MPI_Pcontrol; 0 = the whole run). The controller adds it to the phase's demand
 * (a `traffic` op with add = true, from this rank's own connection, opened on first use). Peers
 * on this rank's own host add nothing. Returns MPI_SUCCESS, also when there is no controller or
 * SDN_MPI_Init has not run (then nothing is sent, and the first such call of a process logs one
 * line); MPI_ERR_ARG (n < 0, NULL arrays, bytes < 1), MPI_ERR_COMM, MPI_ERR_RANK (a peer out of
 * range), MPI_ERR_NO_MEM, or MPI_ERR_OTHER if the controller refused the hint. Never aborts.
 */
SDNMPI_EXPORT int SDN_MPI_Flow_hint(MPI_Comm comm, int peer, long long bytes);
SDNMPI_EXPORT int SDN_MPI_Flow_hints(MPI_Comm comm, int n, const int *peers,
                                     const long long *bytes);

/*
 * Local. This rank enters phase k (1..64), or leaves its phase (k = 0), like MPI_Pcontrol(k) under
 * the preload library: the controller installs phase k's routes when a rank enters it and
 * releases them when no rank is in it any more. Returns MPI_SUCCESS (failures to reach the
 * controller are logged, never returned), or MPI_ERR_ARG if k is out of range (nothing changes).
 */
SDNMPI_EXPORT int SDN_MPI_Phase(int k);

#ifdef __cplusplus
}
#endif

#endif /* SDNMPI_H */
