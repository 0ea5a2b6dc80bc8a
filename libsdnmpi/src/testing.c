/* testing.c -- hooks for libsdnmpi's own tests (sdnmpi_testing.h); not part of the API. */
#include "sdnmpi.h"
#include "sdnmpi_testing.h"
#include "state.h"

SDNMPI_EXPORT int sdnmpi_test_last_path(void)
{
    return sdnmpi_g.last_path;
}
