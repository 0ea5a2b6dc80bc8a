/* timing.c -- the start-up and first-call phase times (timing.h). */
#include "timing.h"

#include <time.h>

#include "state.h"

static const char *const names_of[SDNMPI_T_N] = {
    [SDNMPI_T_INIT] = "init",
    [SDNMPI_T_INIT_MPI] = "init_mpi",
    [SDNMPI_T_INIT_RPC] = "init_rpc",
    [SDNMPI_T_INIT_RTTS] = "init_rtts",
    [SDNMPI_T_INIT_CTRL] = "init_ctrl",
    [SDNMPI_T_INIT_AHEAD] = "init_ahead",
    [SDNMPI_T_PLAN] = "plan",
    [SDNMPI_T_PLAN_MPI] = "plan_mpi",
    [SDNMPI_T_PLAN_LOCATE] = "plan_locate",
    [SDNMPI_T_PLAN_REQUEST] = "plan_request",
    [SDNMPI_T_PLAN_AHEAD] = "plan_ahead",
    [SDNMPI_T_PLAN_AHEAD_AGE] = "plan_ahead_age",
    [SDNMPI_T_PLAN_RTTS] = "plan_rtts",
    [SDNMPI_T_PLAN_CTRL] = "plan_ctrl",
    [SDNMPI_T_PLAN_CTRL_PLAN] = "plan_ctrl_plan",
    [SDNMPI_T_PLAN_CTRL_INSTALL] = "plan_ctrl_install",
    [SDNMPI_T_BCAST_SETUP] = "bcast_setup",
    [SDNMPI_T_BCAST_TREE] = "bcast_tree",
    [SDNMPI_T_BCAST_REQUEST] = "bcast_request",
    [SDNMPI_T_BCAST_CTRL] = "bcast_ctrl",
    [SDNMPI_T_BCAST_CTRL_INSTALL] = "bcast_ctrl_install",
    [SDNMPI_T_INIT_ALLREDUCE] = "init_allreduce",
    [SDNMPI_T_INIT_GATHER] = "init_gather",
    [SDNMPI_T_INIT_BCAST] = "init_bcast",
    [SDNMPI_T_PLAN_DECIDE] = "plan_decide",
    [SDNMPI_T_PLAN_ALLREDUCE] = "plan_allreduce",
    [SDNMPI_T_PLAN_SCATTER] = "plan_scatter",
    [SDNMPI_T_PLAN_SPLIT] = "plan_split",
    [SDNMPI_T_PLAN_LAYOUT] = "plan_layout",
    [SDNMPI_T_INIT_LIBCOMM] = "init_libcomm",
    [SDNMPI_T_LIBCOMM_WAIT] = "libcomm_wait",
};

double sdnmpi_clock(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0; /* cannot fail for CLOCK_MONOTONIC; a zero shows up as a nonsense time */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sdnmpi_timing_set(enum sdnmpi_tslot slot, double value)
{
    if (slot >= 0 && slot < SDNMPI_T_N)
        sdnmpi_g.timing[slot] = value;
}

double sdnmpi_timing_step(enum sdnmpi_tslot slot, double t0)
{
    double t = sdnmpi_clock();
    sdnmpi_timing_set(slot, t - t0);
    return t;
}

size_t sdnmpi_timing_get(const char **names, double *values, size_t cap)
{
    for (size_t i = 0; i < cap && i < SDNMPI_T_N; i++) {
        names[i] = names_of[i];
        values[i] = sdnmpi_g.timing[i];
    }
    return SDNMPI_T_N;
}
