/* state.c -- the library's one state object and the question every collective asks of it. Every
 * other unit uses these; this unit uses none of them (init.c fills the state at SDN_MPI_Init). */
#include "state.h"

struct sdnmpi_state sdnmpi_g = {
    .world_rank = -1,
    .keyval = MPI_KEYVAL_INVALID,
    .bcast_keyval = MPI_KEYVAL_INVALID,
    .reg_keyval = MPI_KEYVAL_INVALID,
    .ahead_keyval = MPI_KEYVAL_INVALID,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .conn = {.fd = -1, .next_id = 1},
    .libworld = MPI_COMM_NULL,
    .timing = {[0 ... SDNMPI_T_N - 1] = -1.0},
};

const char *sdnmpi_state_unavailable(void)
{
    const struct sdnmpi_state *s = &sdnmpi_g;
    if (!s->initialized)
        return "SDN_MPI_Init was not called";
    if (s->finalized)
        return "after SDN_MPI_Finalize";
    return s->sdn_ok ? NULL : s->off_reason;
}
