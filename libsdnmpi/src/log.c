/* log.c -- diagnostics on stderr, one write(2) per line so that ranks' lines do not interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "state.h"

#define LINE_MAX_BYTES 1024

static void emit(const char *fmt, va_list ap)
{
    char line[LINE_MAX_BYTES];
    int n;
    if (sdnmpi_g.world_rank >= 0)
        n = snprintf(line, sizeof line, "sdnmpi[%d]: ", sdnmpi_g.world_rank);
    else
        n = snprintf(line, sizeof line, "sdnmpi[?]: ");
    if (n < 0)
        return;
    size_t len = (size_t)n;
    int m = vsnprintf(line + len, sizeof line - len, fmt, ap);
    if (m < 0)
        return;
    len += (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2; /* truncated */
    line[len++] = '\n';
    const char *p = line;
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, p, len);
        if (w <= 0)
            return; /* nothing sensible to do about a broken stderr */
        p += w;
        len -= (size_t)w;
    }
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
    emit(fmt, ap);
    va_end(ap);
}

void sdnmpi_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(fmt, ap);
    va_end(ap);
}
