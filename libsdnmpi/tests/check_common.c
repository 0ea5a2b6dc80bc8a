/* check_common.c -- see check_common.h. */
#include "check_common.h"

#include <complex.h>
#include <stdlib.h>
#include <string.h>

const char *check_prog = "check";
int check_rank = -1;
long long failures;

#define T(name, dt, kind, ctype) {name, dt, kind, sizeof(ctype)}
const struct tdesc check_types[] = {
    T("signed char", MPI_SIGNED_CHAR, K_SINT, signed char),
    T("unsigned char", MPI_UNSIGNED_CHAR, K_UINT, unsigned char),
    T("short", MPI_SHORT, K_SINT, short),
    T("unsigned short", MPI_UNSIGNED_SHORT, K_UINT, unsigned short),
    T("int", MPI_INT, K_SINT, int),
    T("unsigned", MPI_UNSIGNED, K_UINT, unsigned),
    T("long", MPI_LONG, K_SINT, long),
    T("unsigned long", MPI_UNSIGNED_LONG, K_UINT, unsigned long),
    T("long long", MPI_LONG_LONG, K_SINT, long long),
    T("unsigned long long", MPI_UNSIGNED_LONG_LONG, K_UINT, unsigned long long),
    T("int8_t", MPI_INT8_T, K_SINT, int8_t),
    T("int16_t", MPI_INT16_T, K_SINT, int16_t),
    T("int32_t", MPI_INT32_T, K_SINT, int32_t),
    T("int64_t", MPI_INT64_T, K_SINT, int64_t),
    T("uint8_t", MPI_UINT8_T, K_UINT, uint8_t),
    T("uint16_t", MPI_UINT16_T, K_UINT, uint16_t),
    T("uint32_t", MPI_UINT32_T, K_UINT, uint32_t),
    T("uint64_t", MPI_UINT64_T, K_UINT, uint64_t),
    T("MPI_AINT", MPI_AINT, K_SINT, MPI_Aint),
    T("MPI_OFFSET", MPI_OFFSET, K_SINT, MPI_Offset),
    T("MPI_COUNT", MPI_COUNT, K_SINT, MPI_Count),
    T("float", MPI_FLOAT, K_FLOAT, float),
    T("double", MPI_DOUBLE, K_DOUBLE, double),
    T("long double", MPI_LONG_DOUBLE, K_LDOUBLE, long double),
    T("float complex", MPI_C_FLOAT_COMPLEX, K_CFLOAT, float _Complex),
    T("double complex", MPI_C_DOUBLE_COMPLEX, K_CDOUBLE, double _Complex),
    T("long double complex", MPI_C_LONG_DOUBLE_COMPLEX, K_CLDOUBLE, long double _Complex),
    T("bool", MPI_C_BOOL, K_BOOL, _Bool),
    T("byte", MPI_BYTE, K_BYTE, unsigned char),
    T("float_int", MPI_FLOAT_INT, K_FLOAT_INT, struct float_int),
    T("double_int", MPI_DOUBLE_INT, K_DOUBLE_INT, struct double_int),
    T("long_int", MPI_LONG_INT, K_LONG_INT, struct long_int),
    T("2int", MPI_2INT, K_2INT, struct int_int),
    T("short_int", MPI_SHORT_INT, K_SHORT_INT, struct short_int),
    T("long_double_int", MPI_LONG_DOUBLE_INT, K_LDOUBLE_INT, struct ldouble_int),
};
#undef T
const size_t check_ntypes = sizeof check_types / sizeof check_types[0];

int defined_for(MPI_Op op, enum kind k)
{
    if (op == MPI_SUM || op == MPI_PROD)
        return is_int(k) || is_real(k) || is_cplx(k);
    if (op == MPI_MIN || op == MPI_MAX)
        return is_int(k) || is_real(k);
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return is_int(k) || k == K_BOOL;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return is_int(k) || k == K_BYTE;
    return is_pair(k);
}

uint64_t check_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void check_mpi(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "%s[%d]: %s failed with %d\n", check_prog, check_rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "%s: out of memory\n", check_prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);
    if (v == NULL || !*v)
        return dflt;
    if (!strcmp(v, "unlimited"))
        return UINT64_MAX;
    return strtoull(v, NULL, 10);
}
