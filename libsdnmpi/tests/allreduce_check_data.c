/*
 * allreduce_check_data.c -- allreduce_check's data (allreduce_check.h): seeded random vectors that
 * every summation order reduces alike where the rules ask for bit-identical results, and the
 * comparisons of results (bit for bit, or within a few ulps for floating SUM/PROD).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce_check.h"

/* ---- random data ------------------------------------------------------------------------- */

static uint64_t rng_state;
uint64_t rnd(void) { return check_splitmix(&rng_state); }
double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
void seed_rng(uint64_t a, uint64_t b, uint64_t c)
{
    rng_state = a * 0x100000001b3ull ^ (b << 20) ^ (c << 44) ^ 0x5d4;
    (void)rnd();
}

static long double real_value(MPI_Op op)
{
    if (op == MPI_SUM)
        return 0.5L + (long double)unif();
    if (op == MPI_PROD)
        return 0.9L + 0.2L * (long double)unif();
    return ((long double)unif() - 0.5L) * 1000.0L;
}


/* Whether rank `rank` of `size` contributes the one factor other than +-1 of element e (8-bit
 * PROD). */
static int rank_of_element(int e, int rank, int size)
{
    return size > 0 && e % size == rank;
}

void gen(const struct tdesc *t, MPI_Op op, char *buf, int count, MPI_Aint extent, int rank,
         int size)
{
    memset(buf, 0, (size_t)count * (size_t)extent);
    for (int e = 0; e < count; e++) {
        char *p = buf + (size_t)e * (size_t)extent;
        switch (t->kind) {
        case K_SINT:
        case K_UINT: {
            int64_t v;
            uint64_t r = rnd();
            /* Sums and products stay in range for 8-bit types on `size` ranks: on overflow Open
             * MPI's vectorised 8-bit SUM saturates (op/avx; short vectors wrap), and saturation
             * depends on the order, so no two algorithms agree (PMPI's own included). The 8-bit
             * SUM terms are at most 127 / size (signed, +-) or 255 / size (unsigned), capped at
             * 12 and 25 (the same data as before on up to 10 ranks). */
            if (op == MPI_SUM && t->size == 1) {
                int64_t ranks = size > 1 ? size : 1, cap = t->kind == K_SINT ? 12 : 25;
                int64_t span = (t->kind == K_SINT ? 127 : 255) / ranks;
                span = span < cap ? span : cap;
                v = t->kind == K_SINT ? (int64_t)(r % (uint64_t)(2 * span + 1)) - span
                                      : (int64_t)(r % (uint64_t)(span + 1));
            } else if (op == MPI_SUM) {
                v = t->kind == K_SINT ? (int64_t)(r % 201) - 100 : (int64_t)(r % 201);
            } else if (op == MPI_PROD && t->size == 1) {
                v = (rank_of_element(e, rank, size) ? (int64_t[]){2, 3}[r % 2] : (int64_t)1)
                    * (t->kind == K_SINT && (r & 4) ? -1 : 1);
            } else if (op == MPI_PROD) {
                v = (int64_t[]){1, 2, 3, t->kind == K_SINT ? -1 : 1}[r % 4];
            } else if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
                v = (int64_t[]){0, 0, 1, 5}[r % 4];
            } else {
                v = (int64_t)r;
            }
            memcpy(p, &v, t->size); /* little endian: the low bytes */
            break;
        }
        case K_FLOAT: { float v = (float)real_value(op); memcpy(p, &v, sizeof v); break; }
        case K_DOUBLE: { double v = (double)real_value(op); memcpy(p, &v, sizeof v); break; }
        case K_LDOUBLE: { long double v = real_value(op); memcpy(p, &v, sizeof v); break; }
        case K_CFLOAT:
        case K_CDOUBLE:
        case K_CLDOUBLE: {
            long double re = real_value(op);
            long double im = op == MPI_PROD ? 0.2L * ((long double)unif() - 0.5L) : real_value(op);
            if (t->kind == K_CFLOAT) {
                float v[2] = {(float)re, (float)im};
                memcpy(p, v, sizeof v);
            } else if (t->kind == K_CDOUBLE) {
                double v[2] = {(double)re, (double)im};
                memcpy(p, v, sizeof v);
            } else {
                long double v[2] = {re, im};
                memcpy(p, v, sizeof v);
            }
            break;
        }
        case K_BOOL: { _Bool v = rnd() & 1; memcpy(p, &v, sizeof v); break; }
        case K_BYTE: { unsigned char v = (unsigned char)rnd(); memcpy(p, &v, 1); break; }
        case K_FLOAT_INT: { struct float_int v = {(float)(rnd() % 8), (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        case K_DOUBLE_INT: { struct double_int v = {(double)(rnd() % 8), (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        case K_LONG_INT: { struct long_int v = {(long)(rnd() % 8) - 4, (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        case K_2INT: { struct int_int v = {(int)(rnd() % 8) - 4, (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        case K_SHORT_INT: { struct short_int v = {(short)(rnd() % 8), (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        case K_LDOUBLE_INT: { struct ldouble_int v = {(long double)(rnd() % 8), (int)(rnd() % 1000)}; memcpy(p, &v, sizeof v); break; }
        }
    }
}

void check_sum_in_range(const struct tdesc *t, MPI_Op op, const char *buf, int count,
                        MPI_Aint extent, MPI_Comm comm)
{
    if (op != MPI_SUM || t->size != 1 || (t->kind != K_SINT && t->kind != K_UINT) || count < 1)
        return;
    int64_t *wide = xmalloc((size_t)count * sizeof *wide), lo = t->kind == K_SINT ? -128 : 0;
    for (int e = 0; e < count; e++) {
        const char *p = buf + (size_t)e * (size_t)extent;
        wide[e] = t->kind == K_SINT ? (int64_t)*(const int8_t *)p : (int64_t)*(const uint8_t *)p;
    }
    check_mpi(PMPI_Allreduce(MPI_IN_PLACE, wide, count, MPI_INT64_T, MPI_SUM, comm), "wide sum");
    for (int e = 0; e < count; e++) {
        if (wide[e] < lo || wide[e] > lo + 255) {
            FAIL("%s SUM count=%d: element %d sums to %lld, out of range (allreduce_check's data)",
                 t->name, count, e, (long long)wide[e]);
            break;
        }
    }
    free(wide);
}

/* ---- comparisons -------------------------------------------------------------------------- */

#define LD_BYTES 10 /* x87 extended precision: the rest of a long double is padding */

/* Bitwise equality of the meaningful bytes of element e. */
int same_bits(const struct tdesc *t, const char *a, const char *b)
{
    switch (t->kind) {
    case K_LDOUBLE:
        return !memcmp(a, b, LD_BYTES);
    case K_CLDOUBLE:
        return !memcmp(a, b, LD_BYTES) && !memcmp(a + sizeof(long double), b + sizeof(long double), LD_BYTES);
    case K_FLOAT_INT: return !memcmp(a, b, sizeof(float)) && !memcmp(a + offsetof(struct float_int, i), b + offsetof(struct float_int, i), sizeof(int));
    case K_DOUBLE_INT: return !memcmp(a, b, sizeof(double)) && !memcmp(a + offsetof(struct double_int, i), b + offsetof(struct double_int, i), sizeof(int));
    case K_LONG_INT: return !memcmp(a, b, sizeof(long)) && !memcmp(a + offsetof(struct long_int, i), b + offsetof(struct long_int, i), sizeof(int));
    case K_2INT: return !memcmp(a, b, 2 * sizeof(int));
    case K_SHORT_INT: return !memcmp(a, b, sizeof(short)) && !memcmp(a + offsetof(struct short_int, i), b + offsetof(struct short_int, i), sizeof(int));
    case K_LDOUBLE_INT: return !memcmp(a, b, LD_BYTES) && !memcmp(a + offsetof(struct ldouble_int, i), b + offsetof(struct ldouble_int, i), sizeof(int));
    default:
        return !memcmp(a, b, t->size);
    }
}

static int ceil_log2(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}

/* |a - b| <= tol * scale for real kinds (complex: per component, scale = |b|). */
int close_enough(const struct tdesc *t, const char *a, const char *b, int p)
{
    long double eps = t->kind == K_FLOAT || t->kind == K_CFLOAT ? FLT_EPSILON
                      : t->kind == K_DOUBLE || t->kind == K_CDOUBLE ? DBL_EPSILON : LDBL_EPSILON;
    long double tol = (is_cplx(t->kind) ? 8 : 4) * eps * (ceil_log2(p) + 2);
    long double x[2] = {0, 0}, y[2] = {0, 0};
    int n = is_cplx(t->kind) ? 2 : 1;
    for (int i = 0; i < n; i++) {
        if (t->kind == K_FLOAT || t->kind == K_CFLOAT) {
            float u, v;
            memcpy(&u, a + i * sizeof u, sizeof u);
            memcpy(&v, b + i * sizeof v, sizeof v);
            x[i] = u, y[i] = v;
        } else if (t->kind == K_DOUBLE || t->kind == K_CDOUBLE) {
            double u, v;
            memcpy(&u, a + i * sizeof u, sizeof u);
            memcpy(&v, b + i * sizeof v, sizeof v);
            x[i] = u, y[i] = v;
        } else {
            long double u, v;
            memcpy(&u, a + i * sizeof u, sizeof u);
            memcpy(&v, b + i * sizeof v, sizeof v);
            x[i] = u, y[i] = v;
        }
    }
    long double scale = sqrtl(y[0] * y[0] + y[1] * y[1]);
    for (int i = 0; i < n; i++)
        if (!(fabsl(x[i] - y[i]) <= tol * scale))
            return 0;
    return 1;
}
