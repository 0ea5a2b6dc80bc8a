/*
 * coll_check.c -- compares SDN_MPI_Allgather, SDN_MPI_Reduce and SDN_MPI_Alltoall with
 * PMPI_Allgather, PMPI_Reduce and PMPI_Alltoall (run by tests/unit/test_libsdnmpi_coll.py under
 * mpirun).
 *
 * Every predefined datatype the library knows (allreduce_check's list), several counts, with and
 * without MPI_IN_PLACE, on MPI_COMM_WORLD, on a communicator with the ranks reversed, and on the
 * two halves of MPI_Comm_split (non-power-of-two sizes); Reduce for every predefined op and every
 * datatype it is defined for, with several roots. Fallbacks that must happen: a non-contiguous
 * (vector) datatype, send and receive datatypes of one signature but different layout, an
 * intercommunicator, a user-defined op, a derived datatype.
 *
 * Every result is compared bit for bit with the PMPI call's (whole receive buffers, both filled
 * with the same pattern first). Reduce's inputs are small integers (also for floating types), so
 * every sum and product is exact and the result does not depend on the order of the reduction:
 * the root's result must equal PMPI_Reduce's exactly (long double values by value: their padding
 * bytes are undefined; complex values by value: the sign of a zero part depends on the order).
 *
 * Options: --expect sdn|pmpi|any  the path eligible calls must take (default any)
 *          --quick                fewer datatypes and counts
 *          --seed N
 *          --reduce-path N        every Reduce that takes the SDN path takes path N
 *                                 (sdnmpi_test_last_reduce: 2 reduce-scatter + gather, 3 chains)
 *          --allgather-path N     every Allgather that takes the SDN path takes path N
 *                                 (sdnmpi_test_last_allgather: 2 recursive doubling, 3 ring,
 *                                 4 two cycles)
 * Knobs read like the library: SDN_MPI_MIN_BYTES (unset: 64 KiB for these three),
 * SDN_MPI_MAX_BYTES (plain integers here).
 * Rank 0 prints "coll_check: p=P cases=N failures=F allgather sdn=A pmpi=B reduce sdn=C pmpi=D
 * alltoall sdn=E pmpi=F"; the exit status is 1 if any check failed.
 */
#include <complex.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_common.h"
#include "sdnmpi.h"
#include "sdnmpi_testing.h"

#define NTYPES ((int)check_ntypes)

static MPI_Op ops[12]; /* filled in main: Open MPI's handles are not constants */
static const char *op_names[] = {"SUM", "PROD", "MIN", "MAX", "LAND", "LOR", "LXOR", "BAND",
                                 "BOR", "BXOR", "MINLOC", "MAXLOC"};
#define NOPS 12


static uint64_t rng_state, base_seed = 0xc011;
static uint64_t rnd(void) { return check_splitmix(&rng_state); }
static void seed_rng(uint64_t a, uint64_t b, uint64_t c)
{
    rng_state = a * 0x100000001b3ull ^ (b << 20) ^ (c << 44) ^ base_seed;
}

static int world_rank, cases, expect_mode; /* 0 any, 1 sdn, 2 pmpi */
static int quick, reduce_path, allgather_path;
static uint64_t min_bytes, max_bytes = UINT64_MAX;
static int sdn_count[3], pmpi_count[3];
enum { AG, RED, A2A };

/* Counts the path and checks it against --expect; `eligible` = the library must take its path. */
static void note(int coll, int path, int eligible, const char *what)
{
    if (path == 1)
        pmpi_count[coll]++;
    else
        sdn_count[coll]++;
    if (expect_mode == 1 && eligible && path == 1)
        FAIL("%s: fell back to PMPI", what);
    if ((expect_mode == 2 || !eligible) && expect_mode != 0 && path != 1)
        FAIL("%s: took SDN path %d, expected PMPI", what, path);
    if (coll == RED && reduce_path != 0 && path != 1 && path != reduce_path)
        FAIL("%s: took reduce path %d, expected %d", what, path, reduce_path);
    if (coll == AG && allgather_path != 0 && path != 1 && path != allgather_path)
        FAIL("%s: took allgather path %d, expected %d", what, path, allgather_path);
}

/* All ranks of comm agree that every rank's check passed. */
static void agree(MPI_Comm comm, int ok, const char *what)
{
    int all = 0;
    check_mpi(PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "agree");
    cases++;
    if (!all && !ok)
        FAIL("%s: result differs from PMPI's", what);
}

static int contiguous(MPI_Datatype t)
{
    int size;
    MPI_Aint lb, ext, tlb, text;
    check_mpi(MPI_Type_size(t, &size), "size");
    check_mpi(MPI_Type_get_extent(t, &lb, &ext), "extent");
    check_mpi(MPI_Type_get_true_extent(t, &tlb, &text), "true extent");
    return lb == 0 && tlb == 0 && ext == size && text == size;
}

static int sized(uint64_t bytes) { return bytes >= min_bytes && bytes <= max_bytes; }

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    check_mpi(MPI_Type_get_extent(t, &lb, &ext), "extent");
    return ext;
}

/* ---- Allgather and Alltoall: data movement, random bytes ------------------------------------ */

/* One case of `coll` (AG or A2A) on comm: SDN and PMPI with the same inputs, the whole receive
 * buffers compared. rtype/rcount may differ from stype/scount (same signature). */
/* The SDN collective (coll: AG or A2A) into r1, then PMPI's into r2; the SDN path taken. */
static int run_both(int coll, const void *s1, const void *s2, int scount, MPI_Datatype stype,
                    void *r1, void *r2, int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    if (coll == AG) {
        check_mpi(SDN_MPI_Allgather(s1, scount, stype, r1, rcount, rtype, comm), "SDN_MPI_Allgather");
        int path = sdnmpi_test_last_allgather();
        check_mpi(PMPI_Allgather(s2, scount, stype, r2, rcount, rtype, comm), "PMPI_Allgather");
        return path;
    }
    check_mpi(SDN_MPI_Alltoall(s1, scount, stype, r1, rcount, rtype, comm), "SDN_MPI_Alltoall");
    int path = sdnmpi_test_last_alltoall();
    check_mpi(PMPI_Alltoall(s2, scount, stype, r2, rcount, rtype, comm), "PMPI_Alltoall");
    return path;
}

static void move_case(int coll, MPI_Comm comm, const char *cname, MPI_Datatype stype, int scount,
                      MPI_Datatype rtype, int rcount, int in_place, const char *tname, int eligible)
{
    int rank, p, tsize;
    check_mpi(MPI_Comm_rank(comm, &rank), "rank");
    check_mpi(MPI_Comm_size(comm, &p), "size");
    check_mpi(MPI_Type_size(rtype, &tsize), "type size");
    size_t sext = (size_t)extent_of(stype) * (size_t)scount;
    size_t rext = (size_t)extent_of(rtype) * (size_t)rcount;
    size_t nsend = coll == AG ? sext : sext * (size_t)p, nrecv = rext * (size_t)p;
    unsigned char *send = xmalloc(nsend), *r1 = xmalloc(nrecv), *r2 = xmalloc(nrecv);
    seed_rng((uint64_t)rank + 1, (uint64_t)rcount, (uint64_t)coll * 7 + (uint64_t)in_place);
    for (size_t i = 0; i < nsend; i++)
        send[i] = (unsigned char)rnd();
    for (size_t i = 0; i < nrecv; i++)
        r1[i] = r2[i] = (unsigned char)(i * 131 + 0xa5);
    const void *s1 = send, *s2 = send;
    if (in_place) {
        if (coll == AG) { /* my block already in place, as PMPI expects it */
            memcpy(r1 + (size_t)rank * rext, send, rext < nsend ? rext : nsend);
            memcpy(r2 + (size_t)rank * rext, send, rext < nsend ? rext : nsend);
        } else {
            memcpy(r1, send, nrecv < nsend ? nrecv : nsend);
            memcpy(r2, send, nrecv < nsend ? nrecv : nsend);
        }
        s1 = s2 = MPI_IN_PLACE;
    }
    int path = run_both(coll, s1, s2, scount, stype, r1, r2, rcount, rtype, comm);
    char what[160];
    snprintf(what, sizeof what, "%s %s type=%s count=%d%s p=%d", coll == AG ? "allgather" : "alltoall",
             cname, tname, rcount, in_place ? " in-place" : "", p);
    uint64_t total = (uint64_t)tsize * (uint64_t)rcount * (uint64_t)p;
    note(coll, path, eligible && p > 1 && rcount > 0 && sized(total), what);
    agree(comm, memcmp(r1, r2, nrecv) == 0, what);
    free(send);
    free(r1);
    free(r2);
}

static void movement(MPI_Comm comm, const char *cname)
{
    const int counts[] = {0, 1, 7, 300, 5000};
    int ncounts = quick ? 3 : 5;
    for (int coll = AG; coll <= A2A; coll += A2A - AG) {
        for (int ti = 0; ti < NTYPES; ti++) {
            if (quick && ti % 5 != 0)
                continue;
            const struct tdesc *t = &check_types[ti];
            int ok = contiguous(t->dt);
            for (int ci = quick ? 1 : 0; ci < ncounts + (quick ? 1 : 0) && ci < 5; ci++)
                for (int ip = 0; ip < 2; ip++)
                    move_case(coll, comm, cname, t->dt, counts[ci], t->dt, counts[ci], ip, t->name, ok);
        }
        /* one signature, two layouts: 2n ints sent, n pairs of ints received */
        MPI_Datatype two, vec;
        check_mpi(MPI_Type_contiguous(2, MPI_INT, &two), "contiguous");
        check_mpi(MPI_Type_commit(&two), "commit");
        move_case(coll, comm, cname, MPI_INT, 2 * 1000, two, 1000, 0, "2 ints as a pair", 1);
        /* a vector with gaps: PMPI */
        check_mpi(MPI_Type_vector(3, 1, 2, MPI_INT, &vec), "vector");
        check_mpi(MPI_Type_commit(&vec), "commit");
        move_case(coll, comm, cname, vec, 400, vec, 400, 0, "vector", 0);
        MPI_Type_free(&two);
        MPI_Type_free(&vec);
    }
}

/* ---- Reduce: small integers, exact in every type ------------------------------------------- */

/* No sum or product overflows, not even in 8 bits with 8 ranks: Open MPI 4.1's vectorised
 * (op/avx) SUM for 8- and 16-bit integers saturates, so PMPI's result would depend on the order. */
static long value_for(MPI_Op op, enum kind k, int rank)
{
    if (op == MPI_PROD) {
        long x = rank < 3 && rnd() % 2 ? 2 : 1;
        return k != K_UINT && rnd() % 2 ? -x : x;
    }
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return (long)rnd();
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return (long)(rnd() % 3);
    return k == K_UINT ? (long)(rnd() % 15) : (long)(rnd() % 15) - 7;
}

static void put(unsigned char *buf, size_t i, const struct tdesc *t, MPI_Aint ext, long x, int idx)
{
    unsigned char *e = buf + i * (size_t)ext;
    switch (t->kind) {
    case K_SINT:
    case K_UINT: {
        int64_t v = x;
        memcpy(e, &v, t->size); /* little-endian: the low bytes */
        break;
    }
    case K_FLOAT: *(float *)e = (float)x; break;
    case K_DOUBLE: *(double *)e = (double)x; break;
    case K_LDOUBLE: *(long double *)e = (long double)x; break;
    case K_CFLOAT: *(float _Complex *)e = (float)x + (float)(x % 3) * I; break;
    case K_CDOUBLE: *(double _Complex *)e = (double)x + (double)(x % 3) * I; break;
    case K_CLDOUBLE: *(long double _Complex *)e = (long double)x + (long double)(x % 3) * I; break;
    case K_BOOL: *(_Bool *)e = (x & 1) != 0; break;
    case K_BYTE: *e = (unsigned char)x; break;
    case K_FLOAT_INT: *(struct float_int *)e = (struct float_int){(float)x, idx}; break;
    case K_DOUBLE_INT: *(struct double_int *)e = (struct double_int){(double)x, idx}; break;
    case K_LONG_INT: *(struct long_int *)e = (struct long_int){x, idx}; break;
    case K_2INT: *(struct int_int *)e = (struct int_int){(int)x, idx}; break;
    case K_SHORT_INT: *(struct short_int *)e = (struct short_int){(short)x, idx}; break;
    case K_LDOUBLE_INT: *(struct ldouble_int *)e = (struct ldouble_int){(long double)x, idx}; break;
    }
}

/* Element i of a and b equal (by value where the type has padding). */
static int same(const unsigned char *a, const unsigned char *b, size_t i, const struct tdesc *t,
                MPI_Aint ext)
{
    a += i * (size_t)ext;
    b += i * (size_t)ext;
    switch (t->kind) {
    case K_LDOUBLE: return *(const long double *)a == *(const long double *)b;
    case K_CLDOUBLE: return *(const long double _Complex *)a == *(const long double _Complex *)b;
    /* A complex product's zero parts carry a sign that depends on the order of the products
     * ((1+i)(1-i) = 2 + 0i or 2 - 0i): compared by value, so -0 == +0. */
    case K_CFLOAT: return *(const float _Complex *)a == *(const float _Complex *)b;
    case K_CDOUBLE: return *(const double _Complex *)a == *(const double _Complex *)b;
    case K_DOUBLE_INT: {
        const struct double_int *x = (const void *)a, *y = (const void *)b;
        return !memcmp(&x->v, &y->v, sizeof x->v) && x->i == y->i;
    }
    case K_LONG_INT: {
        const struct long_int *x = (const void *)a, *y = (const void *)b;
        return x->v == y->v && x->i == y->i;
    }
    case K_SHORT_INT: {
        const struct short_int *x = (const void *)a, *y = (const void *)b;
        return x->v == y->v && x->i == y->i;
    }
    case K_LDOUBLE_INT: {
        const struct ldouble_int *x = (const void *)a, *y = (const void *)b;
        return x->v == y->v && x->i == y->i;
    }
    default: return !memcmp(a, b, t->size);
    }
}

static void reduce_case(MPI_Comm comm, const char *cname, const struct tdesc *t, MPI_Datatype dt,
                        int oi, MPI_Op op, int count, int root, int in_place, int eligible)
{
    int rank, p, tsize;
    check_mpi(MPI_Comm_rank(comm, &rank), "rank");
    check_mpi(MPI_Comm_size(comm, &p), "size");
    check_mpi(MPI_Type_size(dt, &tsize), "type size");
    MPI_Aint ext = extent_of(dt);
    size_t n = (size_t)count * (size_t)ext;
    unsigned char *send = xmalloc(n), *r1 = xmalloc(n), *r2 = xmalloc(n);
    memset(send, 0, n);
    seed_rng((uint64_t)rank + 11, (uint64_t)count, (uint64_t)oi);
    for (size_t i = 0; i < (size_t)count; i++)
        put(send, i, t, ext, value_for(op, t->kind, rank), rank);
    memset(r1, 0x5a, n);
    memset(r2, 0x5a, n);
    const void *s = send;
    if (in_place && rank == root) {
        memcpy(r1, send, n);
        memcpy(r2, send, n);
        s = MPI_IN_PLACE;
    }
    check_mpi(SDN_MPI_Reduce(s, r1, count, dt, op, root, comm), "SDN_MPI_Reduce");
    int path = sdnmpi_test_last_reduce();
    check_mpi(PMPI_Reduce(s, r2, count, dt, op, root, comm), "PMPI_Reduce");
    int ok = 1;
    for (size_t i = 0; rank == root && i < (size_t)count; i++) {
        if (ok && !same(r1, r2, i, t, ext) && getenv("COLL_CHECK_DEBUG"))
            fprintf(stderr, "element %zu: %02x %02x vs %02x %02x (send %02x)\n", i, r1[i * ext],
                    r1[i * ext + 1], r2[i * ext], r2[i * ext + 1], send[i * ext]);
        ok = ok && same(r1, r2, i, t, ext);
    }
    if (rank != root) /* not touched on the other ranks */
        for (size_t i = 0; i < n; i++)
            ok = ok && r1[i] == 0x5a;
    char what[160];
    snprintf(what, sizeof what, "reduce %s type=%s op=%s count=%d root=%d%s p=%d", cname, t->name,
             op_names[oi], count, root, in_place ? " in-place" : "", p);
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    note(RED, path, eligible && p > 1 && count >= pof2 && sized((uint64_t)count * (uint64_t)tsize),
         what);
    agree(comm, ok, what);
    free(send);
    free(r1);
    free(r2);
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

static void reductions(MPI_Comm comm, const char *cname)
{
    const int counts[] = {1, 7, 300, 4099};
    int p, k = 0;
    check_mpi(MPI_Comm_size(comm, &p), "size");
    for (int ti = 0; ti < NTYPES; ti++) {
        if (quick && ti % 4 != 0)
            continue;
        for (int oi = 0; oi < NOPS; oi++) {
            if (!defined_for(ops[oi], check_types[ti].kind))
                continue;
            for (int ci = quick ? 2 : 0; ci < 4; ci++, k++)
                reduce_case(comm, cname, &check_types[ti], check_types[ti].dt, oi, ops[oi], counts[ci],
                            (k * 5) % p, (k / 2) % 2, 1);
        }
    }
    /* must fall back: a user-defined op (Open MPI refuses predefined ops on derived datatypes,
     * so the derived-datatype fallback is tested with the user op) */
    MPI_Op mine;
    MPI_Datatype two;
    check_mpi(MPI_Op_create(user_max, 1, &mine), "op create");
    reduce_case(comm, cname, &check_types[4], MPI_INT, 3, mine, 1000, p - 1, 0, 0);
    check_mpi(MPI_Type_contiguous(1, MPI_INT, &two), "contiguous");
    check_mpi(MPI_Type_commit(&two), "commit");
    reduce_case(comm, cname, &check_types[4], two, 3, mine, 1000, 0, 1, 0);
    MPI_Type_free(&two);
    MPI_Op_free(&mine);
}

/* ---- an intercommunicator: Allgather and Alltoall must fall back, correctly ----------------- */

static void intercomm(void)
{
    int p;
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &p), "size");
    if (p < 2)
        return;
    MPI_Comm half, inter;
    int low = world_rank < p / 2;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, low, world_rank, &half), "split");
    check_mpi(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? p / 2 : 0, 77, &inter),
              "intercomm");
    int remote;
    check_mpi(MPI_Comm_remote_size(inter, &remote), "remote size");
    for (int coll = AG; coll <= A2A; coll += A2A - AG) {
        int count = 500;
        size_t nsend = (size_t)count * sizeof(int) * (coll == AG ? 1 : (size_t)remote);
        size_t nrecv = (size_t)count * sizeof(int) * (size_t)remote;
        int *send = xmalloc(nsend), *r1 = xmalloc(nrecv), *r2 = xmalloc(nrecv);
        for (size_t i = 0; i < nsend / sizeof(int); i++)
            send[i] = world_rank * 100000 + (int)i;
        memset(r1, 1, nrecv);
        memset(r2, 1, nrecv);
        int path = run_both(coll, send, send, count, MPI_INT, r1, r2, count, MPI_INT, inter);
        note(coll, path, 0, coll == AG ? "allgather intercomm" : "alltoall intercomm");
        agree(MPI_COMM_WORLD, memcmp(r1, r2, nrecv) == 0,
              coll == AG ? "allgather intercomm" : "alltoall intercomm");
        free(send);
        free(r1);
        free(r2);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    unsigned seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
            i++;
            expect_mode = !strcmp(argv[i], "sdn") ? 1 : !strcmp(argv[i], "pmpi") ? 2 : 0;
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reduce-path") && i + 1 < argc)
            reduce_path = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--allgather-path") && i + 1 < argc)
            allgather_path = atoi(argv[++i]);
    }
    MPI_Init(&argc, &argv);
    const MPI_Op all_ops[NOPS] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR,
                                  MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    memcpy(ops, all_ops, sizeof ops);
    check_mpi(SDN_MPI_Init(), "SDN_MPI_Init");
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank), "rank");
    check_prog = "coll_check";
    check_rank = world_rank;
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    /* unset: the library's default for these three (allgather_util.h); set: that, 0 included */
    min_bytes = env_u64("SDN_MPI_MIN_BYTES", 65536);
    max_bytes = env_u64("SDN_MPI_MAX_BYTES", UINT64_MAX);
    base_seed ^= (uint64_t)seed << 8;

    movement(MPI_COMM_WORLD, "world");
    reductions(MPI_COMM_WORLD, "world");
    MPI_Comm rev, half;
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, 0, p - 1 - world_rank, &rev), "split reversed");
    int saved = quick;
    quick = 1;
    movement(rev, "reversed");
    reductions(rev, "reversed");
    check_mpi(MPI_Comm_split(MPI_COMM_WORLD, world_rank < (p + 1) / 2, world_rank, &half), "split");
    movement(half, "half");
    reductions(half, "half");
    quick = saved;
    intercomm();
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);

    long long total_failures = 0;
    int total_cases = 0;
    check_mpi(MPI_Allreduce(&failures, &total_failures, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "sum");
    MPI_Reduce(&cases, &total_cases, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("coll_check: p=%d cases=%d failures=%lld allgather sdn=%d pmpi=%d reduce sdn=%d "
               "pmpi=%d alltoall sdn=%d pmpi=%d\n",
               p, total_cases, total_failures, sdn_count[AG], pmpi_count[AG], sdn_count[RED],
               pmpi_count[RED], sdn_count[A2A], pmpi_count[A2A]);
    SDN_MPI_Finalize();
    MPI_Finalize();
    return total_failures ? 1 : 0;
}
