/* prof_state.c -- the profiler's one state object and its one diagnostic line. Every other prof_*.c
 * unit uses these two; this unit uses none of them, so the profiler's units form no circle. */
#include <stdarg.h>

#include "logline.h"
#include "prof.h"

struct prof_state prof_g;

void prof_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sdnmpi_log_vline("sdnmpi-prof", prof_g.size > 0 ? prof_g.rank : -1, fmt, ap);
    va_end(ap);
}
