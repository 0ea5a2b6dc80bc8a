/* allreduce_util.c -- what the allreduce algorithms share (allreduce_util.h). */
#include <stdlib.h>
#include <string.h>

#include "allreduce_util.h"
#include "log.h"

void *sdnmpi_scratch(size_t bytes, MPI_Comm comm)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        sdnmpi_warn("out of memory for a %zu-byte allreduce buffer, aborting", bytes);
        PMPI_Abort(comm, MPI_ERR_NO_MEM);
        abort(); /* PMPI_Abort does not return */
    }
    return p;
}

int sdnmpi_allreduce_begin(const void *sendbuf, void *recvbuf, size_t bytes, MPI_Comm comm,
                           int *rank, int *p)
{
    int rc;
    if ((rc = PMPI_Comm_rank(comm, rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, p)) != MPI_SUCCESS)
        return rc;
    if (sendbuf != MPI_IN_PLACE)
        memcpy(recvbuf, sendbuf, bytes);
    return MPI_SUCCESS;
}
