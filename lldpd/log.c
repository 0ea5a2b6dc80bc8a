/* log.c - logging to stderr (foreground) or syslog (daemon). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

void log_msg(const struct logger *lg, int prio, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    if (prio == LOG_DEBUG && !lg->verbose)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap); /* truncates safely */
    va_end(ap);
    if (n < 0)
        return;
    if (lg->use_syslog)
        syslog(prio, "%s", line);
    else
        (void)fprintf(stderr, "%s: %s\n", lg->prog, line);
}
