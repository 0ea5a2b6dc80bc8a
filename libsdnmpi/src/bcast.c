/* bcast.c -- SDN_MPI_Bcast: decides between the multicast protocol and PMPI_Bcast.
 *
 * The inputs of the decision are the same on all ranks of a valid collective call (the message's
 * byte count, root, comm, the knobs agreed at SDN_MPI_Init, the tree outcome broadcast by the
 * communicator's rank 0), except those that MPI lets differ between ranks (the datatype's layout,
 * as long as the type signatures match) and local resources (memory). Those are agreed by one
 * PMPI_Allreduce per call before any datagram moves, so all ranks take the same path.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "bcast_mcast.h"
#include "bcast_plan.h"
#include "log.h"
#include "reconnect.h"
#include "sdnmpi.h"
#include "state.h"

static int fallback(const char *why, void *buffer, int count, MPI_Datatype datatype, int root,
                    MPI_Comm comm)
{
    memset(&sdnmpi_g.last_bcast, 0, sizeof sdnmpi_g.last_bcast);
    sdnmpi_g.last_bcast.path = SDNMPI_BCAST_PMPI;
    if (sdnmpi_g.initialized && !sdnmpi_g.finalized)
        sdnmpi_log("bcast count=%d root=%d: PMPI_Bcast (%s)", count, root, why);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

/* Whether count elements of datatype are count x size contiguous bytes at the buffer. */
static int contiguous(MPI_Datatype datatype, int size, int *rc)
{
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    if ((*rc = PMPI_Type_get_extent(datatype, &lb, &extent)) != MPI_SUCCESS
        || (*rc = PMPI_Type_get_true_extent(datatype, &tlb, &textent)) != MPI_SUCCESS)
        return 0;
    return lb == 0 && tlb == 0 && extent == size && textent == size;
}

SDNMPI_EXPORT int SDN_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    const char *why = sdnmpi_state_unavailable();
    int rc = MPI_SUCCESS;

    if (why == NULL && (comm == MPI_COMM_NULL || datatype == MPI_DATATYPE_NULL || count < 0))
        why = "invalid argument"; /* PMPI_Bcast reports it */
    if (why != NULL)
        return fallback(why, buffer, count, datatype, root, comm);

    int inter = 0, p = 0, size = 0;
    if ((rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return rc;
    if (inter)
        return fallback("intercommunicator", buffer, count, datatype, root, comm);
    if ((rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    if (root < 0 || root >= p)
        return fallback("invalid root", buffer, count, datatype, root, comm);
    if ((rc = PMPI_Type_size(datatype, &size)) != MPI_SUCCESS)
        return rc;
    if (size == MPI_UNDEFINED || size < 0)
        return fallback("datatype size overflows int", buffer, count, datatype, root, comm);
    uint64_t bytes = (uint64_t)count * (uint64_t)size;
    if (bytes == 0)
        return fallback("empty message", buffer, count, datatype, root, comm);
    if (p == 1)
        return fallback("one rank", buffer, count, datatype, root, comm);
    if (bytes < s->cfg.bcast_min_bytes)
        return fallback("below SDN_MPI_BCAST_MIN_BYTES", buffer, count, datatype, root, comm);

    struct sdnmpi_bcast_comm *bc = NULL;
    if ((rc = sdnmpi_reconnect_point(comm)) != MPI_SUCCESS
        || (rc = sdnmpi_bcast_tree_get(comm, root, &bc)) != MPI_SUCCESS)
        return rc;
    if (bc == NULL)
        return fallback("out of memory on some rank", buffer, count, datatype, root, comm);
    if (bc->trees[root].state != SDNMPI_TREE_OK)
        return fallback("no multicast tree for this root", buffer, count, datatype, root, comm);

    /* This rank's view; then everyone's. */
    struct sdnmpi_bcast_call call;
    const char *local = NULL;
    int local_ok = 0, all_ok = 0;
    int is_contiguous = contiguous(datatype, size, &rc);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!is_contiguous)
        local = "non-contiguous datatype";
    else if (sdnmpi_bcast_call_init(&call, buffer, bytes, s->cfg.bcast_datagram, bc->rank == root,
                                    &local) == 0)
        local_ok = 1; /* otherwise `local` says why */
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, bc->priv)) != MPI_SUCCESS) {
        if (local_ok)
            sdnmpi_bcast_call_free(&call);
        return rc;
    }
    if (!all_ok) {
        if (local_ok)
            sdnmpi_bcast_call_free(&call);
        return fallback(local != NULL ? local : "another rank cannot use multicast for this call",
                        buffer, count, datatype, root, comm);
    }
    struct sdnmpi_bcast_stats st;
    rc = sdnmpi_bcast_run(bc, root, &call, count, datatype, &st);
    sdnmpi_bcast_call_free(&call);
    s->last_bcast = st;
    return rc;
}
