/* dtype.h -- which (operation, datatype) pairs the SDN algorithms handle: predefined datatypes
 * and the predefined operations the MPI standard defines for them (MPI-3.1 section 5.9.2). */
#ifndef SDNMPI_DTYPE_H
#define SDNMPI_DTYPE_H

#include <mpi.h>

/* NULL if (op, datatype) is supported; else a short reason for the fall back. Depends only on
 * the arguments, so every rank of a collective call decides alike. `rc` gets an MPI error code
 * if an MPI query failed (the reason is then "MPI error"). */
const char *sdnmpi_dtype_unsupported(MPI_Datatype datatype, MPI_Op op, int *rc);

#endif
