/* check_common.h -- what the collective test programs (allreduce_check.c, coll_check.c) share: the
 * datatypes the library accepts with their C element types, which reduction ops MPI defines for
 * each, a seeded generator, and the failure / MPI-error / allocation helpers. */
#ifndef SDNMPI_CHECK_COMMON_H
#define SDNMPI_CHECK_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum kind {
    K_SINT, K_UINT, K_FLOAT, K_DOUBLE, K_LDOUBLE, K_CFLOAT, K_CDOUBLE, K_CLDOUBLE, K_BOOL, K_BYTE,
    K_FLOAT_INT, K_DOUBLE_INT, K_LONG_INT, K_2INT, K_SHORT_INT, K_LDOUBLE_INT,
};

struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct int_int { int v; int i; };
struct short_int { short v; int i; };
struct ldouble_int { long double v; int i; };

struct tdesc {
    const char *name;
    MPI_Datatype dt;
    enum kind kind;
    size_t size; /* sizeof the C element */
};

/* Every datatype the library accepts, predefined ones only. */
extern const struct tdesc check_types[];
extern const size_t check_ntypes;

static inline int is_int(enum kind k) { return k == K_SINT || k == K_UINT; }
static inline int is_real(enum kind k) { return k == K_FLOAT || k == K_DOUBLE || k == K_LDOUBLE; }
static inline int is_cplx(enum kind k) { return k == K_CFLOAT || k == K_CDOUBLE || k == K_CLDOUBLE; }
static inline int is_pair(enum kind k) { return k >= K_FLOAT_INT; }

/* Whether the MPI standard defines op for the datatype (what the tests call). */
int defined_for(MPI_Op op, enum kind k);

/* splitmix64 over *state. */
uint64_t check_splitmix(uint64_t *state);

/* The program's name and world rank, for the lines below; set them first in main. */
extern const char *check_prog;
extern int check_rank;
extern long long failures;

/* One failure: counted, the first 12 printed as "<prog>[rank]: FAIL ...". */
#define FAIL(...)                                                                                \
    do {                                                                                         \
        if (failures++ < 12) {                                                                   \
            fprintf(stderr, "%s[%d]: FAIL ", check_prog, check_rank);                            \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
        }                                                                                        \
    } while (0)

void check_mpi(int rc, const char *what);     /* MPI_Abort(2) unless rc is MPI_SUCCESS */
void *xmalloc(size_t n);                      /* malloc, or MPI_Abort(2) */
uint64_t env_u64(const char *name, uint64_t dflt); /* a number, "unlimited", or dflt if unset */

#endif
