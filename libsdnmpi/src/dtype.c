/* dtype.c -- the predefined datatypes and operations the SDN algorithms accept. */
#include "dtype.h"

#include <stddef.h>

enum tclass { C_INT = 1, FLOATING = 2, COMPLEX = 4, LOGICAL = 8, BYTE = 16, PAIR = 32 };

/* Handles are compared at run time: with Open MPI they are addresses of library objects. */
static int type_class(MPI_Datatype t)
{
    const MPI_Datatype c_int[] = {
        MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED,
        MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
        MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T,
        MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT,
    };
    const MPI_Datatype floating[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
    const MPI_Datatype cplx[] = {MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                    MPI_C_LONG_DOUBLE_COMPLEX};
    const MPI_Datatype pair[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT,
                                 MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
#define SCAN(arr, cls)                                                                           \
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++)                                      \
        if (arr[i] == t)                                                                         \
            return cls;
    SCAN(c_int, C_INT)
    SCAN(floating, FLOATING)
    SCAN(cplx, COMPLEX)
    SCAN(pair, PAIR)
#undef SCAN
    if (t == MPI_C_BOOL)
        return LOGICAL;
    if (t == MPI_BYTE)
        return BYTE;
    return 0;
}

/* The classes an operation is defined for; 0 if `op` is not a predefined reduction. */
static int op_classes(MPI_Op op)
{
    if (op == MPI_MAX || op == MPI_MIN)
        return C_INT | FLOATING;
    if (op == MPI_SUM || op == MPI_PROD)
        return C_INT | FLOATING | COMPLEX;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return C_INT | LOGICAL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return C_INT | BYTE;
    if (op == MPI_MINLOC || op == MPI_MAXLOC)
        return PAIR;
    return 0;
}

const char *sdnmpi_dtype_unsupported(MPI_Datatype datatype, MPI_Op op, int *rc)
{
    int nints, naddrs, ntypes, combiner;
    *rc = PMPI_Type_get_envelope(datatype, &nints, &naddrs, &ntypes, &combiner);
    if (*rc != MPI_SUCCESS)
        return "MPI error";
    if (combiner != MPI_COMBINER_NAMED)
        return "derived datatype";
    int cls = type_class(datatype);
    if (cls == 0)
        return "datatype without SDN support";
    int commute = 0;
    *rc = PMPI_Op_commutative(op, &commute);
    if (*rc != MPI_SUCCESS)
        return "MPI error";
    if (!commute)
        return "non-commutative op";
    int ops = op_classes(op);
    if (ops == 0)
        return "user-defined op";
    if (!(ops & cls))
        return "op not defined for datatype";
    return NULL;
}
