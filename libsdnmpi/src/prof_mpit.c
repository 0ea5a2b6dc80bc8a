/* prof_mpit.c -- the "mpi_t" source: Open MPI's pml_monitoring component counts, per world rank,
 * every message that passes its PML, the ones its collective algorithms send included
 * (pml_monitoring_messages_size / _count, bound to MPI_COMM_WORLD). prof_init.c turns the
 * component on (OMPI_MCA_pml_monitoring_enable=1) before MPI_Init; here the variables are found
 * by name, read at every phase change and at the end, and the differences go to the phases. */
#include <stdlib.h>
#include <string.h>

#include "prof.h"

#define NAME_MAX_BYTES 256
#define PVAR_SIZE "pml_monitoring_messages_size"
#define PVAR_COUNT "pml_monitoring_messages_count"
#define CVAR_ENABLE "pml_monitoring_enable"

static struct {
    int open;
    MPI_T_pvar_session session;
    MPI_T_pvar_handle size_h, count_h;
    int n;
    uint64_t *first_b, *first_m; /* the sample at the start */
    uint64_t *last_b, *last_m;   /* the previous sample */
    uint64_t *now_b, *now_m;
    uint64_t *delta_b, *delta_m;
} mt;

/* The index of the variable named `want` (pvars if pvar, else cvars), or -1. For pvars: its
 * datatype must be a 64-bit unsigned integer and it must bind to a communicator. */
static int find_var(const char *want, int pvar, int *continuous)
{
    int num = 0;
    if ((pvar ? PMPI_T_pvar_get_num(&num) : PMPI_T_cvar_get_num(&num)) != MPI_SUCCESS)
        return -1;
    for (int i = 0; i < num; i++) {
        char name[NAME_MAX_BYTES], desc[NAME_MAX_BYTES];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, var_class, readonly, atomic;
        int scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        int rc = pvar ? PMPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc,
                                            &desc_len, &bind, &readonly, continuous, &atomic)
                      : PMPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                                            &bind, &scope);
        if (rc != MPI_SUCCESS || strcmp(name, want) != 0)
            continue;
        if (!pvar)
            return type == MPI_INT ? i : -1;
        int size = 0;
        if (bind != MPI_T_BIND_MPI_COMM || PMPI_Type_size(type, &size) != MPI_SUCCESS || size != 8)
            return -1;
        return i;
    }
    return -1;
}

/* pml_monitoring_enable's value, or 0 if it cannot be read. */
static int monitoring_enabled(void)
{
    int idx = find_var(CVAR_ENABLE, 0, NULL), count = 0, value = 0;
    MPI_T_cvar_handle h;
    if (idx < 0 || PMPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return 0;
    if (count != 1 || PMPI_T_cvar_read(h, &value) != MPI_SUCCESS)
        value = 0;
    (void)PMPI_T_cvar_handle_free(&h);
    return value;
}

static int alloc_handle(const char *name, MPI_T_pvar_handle *h)
{
    int continuous = 0, count = 0;
    int idx = find_var(name, 1, &continuous);
    MPI_Comm world = MPI_COMM_WORLD;
    if (idx < 0 || PMPI_T_pvar_handle_alloc(mt.session, idx, &world, h, &count) != MPI_SUCCESS)
        return -1;
    if (count != mt.n || (!continuous && PMPI_T_pvar_start(mt.session, *h) != MPI_SUCCESS)) {
        (void)PMPI_T_pvar_handle_free(mt.session, h);
        return -1;
    }
    return 0;
}

static int read_now(void)
{
    if (PMPI_T_pvar_read(mt.session, mt.size_h, mt.now_b) != MPI_SUCCESS ||
        PMPI_T_pvar_read(mt.session, mt.count_h, mt.now_m) != MPI_SUCCESS)
        return -1;
    return 0;
}

static void release(void)
{
    if (mt.size_h != MPI_T_PVAR_HANDLE_NULL)
        (void)PMPI_T_pvar_handle_free(mt.session, &mt.size_h);
    if (mt.count_h != MPI_T_PVAR_HANDLE_NULL)
        (void)PMPI_T_pvar_handle_free(mt.session, &mt.count_h);
    (void)PMPI_T_pvar_session_free(&mt.session);
    (void)PMPI_T_finalize();
    free(mt.first_b);
    mt.first_b = NULL;
    mt.open = 0;
}

int prof_mpit_open(int n)
{
    int provided;
    if (PMPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    mt.n = n;
    mt.size_h = mt.count_h = MPI_T_PVAR_HANDLE_NULL;
    if (!monitoring_enabled() || PMPI_T_pvar_session_create(&mt.session) != MPI_SUCCESS) {
        (void)PMPI_T_finalize();
        return -1;
    }
    mt.first_b = calloc(8 * (size_t)n, sizeof *mt.first_b);
    if (mt.first_b == NULL || alloc_handle(PVAR_SIZE, &mt.size_h) != 0 ||
        alloc_handle(PVAR_COUNT, &mt.count_h) != 0) {
        release();
        return -1;
    }
    mt.first_m = mt.first_b + n;
    mt.last_b = mt.first_m + n;
    mt.last_m = mt.last_b + n;
    mt.now_b = mt.last_m + n;
    mt.now_m = mt.now_b + n;
    mt.delta_b = mt.now_m + n;
    mt.delta_m = mt.delta_b + n;
    if (read_now() != 0) {
        release();
        return -1;
    }
    mt.open = 1;
    return 0;
}

int prof_mpit_begin(void)
{
    if (!mt.open || read_now() != 0)
        return -1;
    memcpy(mt.first_b, mt.now_b, 2 * (size_t)mt.n * sizeof *mt.now_b);
    memcpy(mt.last_b, mt.now_b, 2 * (size_t)mt.n * sizeof *mt.now_b);
    return 0;
}

void prof_mpit_abandon(void)
{
    if (mt.open)
        release();
}

/* delta = now - base; base = now if `advance`. */
static void diff(const uint64_t *now, uint64_t *base, uint64_t *delta, int advance)
{
    for (int i = 0; i < mt.n; i++) {
        delta[i] = now[i] - base[i];
        if (advance)
            base[i] = now[i];
    }
}

int prof_mpit_sample(int k)
{
    if (!mt.open || read_now() != 0)
        return -1;
    diff(mt.now_b, mt.last_b, mt.delta_b, 1);
    diff(mt.now_m, mt.last_m, mt.delta_m, 1);
    return k > 0 ? prof_counts_add(k, mt.delta_b, mt.delta_m) : 0;
}

int prof_mpit_close(int k)
{
    int rc = prof_mpit_sample(k);
    if (rc == 0) {
        diff(mt.now_b, mt.first_b, mt.delta_b, 0);
        diff(mt.now_m, mt.first_m, mt.delta_m, 0);
        rc = prof_counts_add(0, mt.delta_b, mt.delta_m);
    }
    if (mt.open)
        release();
    return rc;
}
