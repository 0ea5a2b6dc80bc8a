/* log.c -- diagnostics on stderr (logline.c writes them). */
#include "log.h"

#include <stdarg.h>

#include "logline.h"
#include "state.h"

static void write_line(const char *fmt, va_list ap)
{
    sdnmpi_log_vline("sdnmpi", sdnmpi_g.world_rank, fmt, ap);
}

int sdnmpi_log_enabled(void)
{
    return sdnmpi_g.cfg.verbose;
}

void sdnmpi_log(const char *fmt, ...)
{
    if (!sdnmpi_g.cfg.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    write_line(fmt, ap);
    va_end(ap);
}

void sdnmpi_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    write_line(fmt, ap);
    va_end(ap);
}
