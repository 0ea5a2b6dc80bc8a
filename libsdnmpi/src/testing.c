/* testing.c -- hooks for libsdnmpi's own tests (sdnmpi_testing.h); not part of the API. */
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

SDNMPI_EXPORT int sdnmpi_test_last_path(void)
{
    return sdnmpi_g.last_path;
}

/* Hidden (not SDNMPI_EXPORT): the shared libraries export only the API and the hook above. */
int sdnmpi_test_last_bcast(int *rounds, long long *resent, long long *finished)
{
    const struct sdnmpi_bcast_stats *st = &sdnmpi_g.last_bcast;
    if (rounds != NULL)
        *rounds = st->rounds;
    if (resent != NULL)
        *resent = st->resent;
    if (finished != NULL)
        *finished = st->finished;
    return st->path;
}
