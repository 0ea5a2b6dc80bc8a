/* prof_init.c -- the profiler's life cycle: MPI_Init / MPI_Init_thread start it, MPI_Pcontrol
 * moves between phases (phase.c), MPI_Finalize stops it and writes the files (prof_finish.c). */
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "prof.h"
#include "prof_finish.h"
#include "sdnmpi.h"

/* SDN_MPI_PROF_SOURCE: "pmpi" forces the PMPI wrappers, "mpi_t" or unset prefers MPI_T. */
static int want_mpit(void)
{
    const char *s = getenv("SDN_MPI_PROF_SOURCE");
    return s == NULL || *s == '\0' || strcmp(s, "mpi_t") == 0;
}

/* Before MPI_Init: Open MPI's pml_monitoring only counts if enabled when the PML is chosen. The
 * value 1 counts every message through the PML, the collectives' own included (2 would leave those
 * out of the performance variables). A value the user set wins. */
static void prepare_env(void)
{
    if (want_mpit() && setenv("OMPI_MCA_pml_monitoring_enable", "1", 0) != 0)
        prof_warn("cannot set OMPI_MCA_pml_monitoring_enable; counting with PMPI wrappers");
}

static void on_phase(int from, int to, void *arg)
{
    (void)arg;
    if (!prof_g.active)
        return;
    if (to > 0)
        (void)prof_phase_get(to); /* so that its events count from now on */
    if (prof_g.source == PROF_SOURCE_MPIT && prof_mpit_sample(from) != 0) {
        prof_warn("reading the MPI_T counters failed at a phase change; no trace will be written");
        prof_g.failed = 1;
    }
}

static void start(void)
{
    memset(&prof_g, 0, sizeof prof_g);
    int rank = 0, size = 0;
    if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        PMPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS)
        return;
    prof_g.rank = rank;
    prof_g.size = size;
    int local_ok = prof_counts_init(size) == 0 && prof_map_init() == MPI_SUCCESS &&
                   sdnmpi_phase_add_hook(on_phase, NULL) == 0;
    int mpit = want_mpit() && prof_mpit_open(size) == 0;
    /* Every rank counts the same way; min over (ok, mpi_t). */
    int mine[2] = {local_ok, mpit}, all[2] = {0, 0};
    if (PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        all[0] = 0;
    if (mpit && !all[1])
        prof_mpit_abandon();
    if (!all[0]) {
        if (mpit && all[1])
            prof_mpit_abandon();
        if (!local_ok)
            prof_warn("cannot start (out of memory or an MPI error): nothing is profiled");
        return;
    }
    prof_g.source = all[1] ? PROF_SOURCE_MPIT : PROF_SOURCE_PMPI;
    if (!all[1] && getenv("SDN_MPI_PROF_SOURCE") != NULL && strcmp(getenv("SDN_MPI_PROF_SOURCE"), "mpi_t") == 0 &&
        rank == 0)
        prof_warn("SDN_MPI_PROF_SOURCE=mpi_t but pml_monitoring's MPI_T variables are missing: using pmpi");
    if (prof_g.source == PROF_SOURCE_MPIT && prof_mpit_begin() != 0) {
        prof_warn("reading the MPI_T counters failed at the start; no trace will be written");
        prof_g.failed = 1;
    }
    sdnmpi_phase_reset();
    prof_g.t_start = PMPI_Wtime();
    prof_g.active = 1;
}

/* The wrappers below call the next definition (chain.h): libsdnmpi-preload.so may be preloaded
 * too, and must see MPI_Init, MPI_Pcontrol and MPI_Finalize whatever the LD_PRELOAD order. */
typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);
typedef int (*pcontrol_fn)(const int, ...);
typedef int (*finalize_fn)(void);

SDNMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
    prepare_env();
    init_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Init");
    int rc = next != NULL ? next(argc, argv) : PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

SDNMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    prepare_env();
    init_thread_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Init_thread");
    int rc = next != NULL ? next(argc, argv, required, provided)
                          : PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        start();
    return rc;
}

SDNMPI_EXPORT int MPI_Pcontrol(const int level, ...)
{
    static int warned;
    if (prof_g.active && sdnmpi_phase_set(level) != 0 && !warned) {
        warned = 1;
        prof_warn("MPI_Pcontrol(%d) ignored: phases are 0..%d", level, SDNMPI_PHASE_MAX);
    }
    pcontrol_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Pcontrol");
    return next != NULL ? next(level) : MPI_SUCCESS;
}

SDNMPI_EXPORT int MPI_Finalize(void)
{
    if (prof_g.active)
        prof_finish();
    (void)sdnmpi_phase_remove_hook(on_phase, NULL);
    prof_map_free();
    prof_counts_free();
    finalize_fn next;
    *(void **)&next = sdnmpi_chain_next("MPI_Finalize");
    return next != NULL ? next() : PMPI_Finalize();
}
