/* log.h - logging to stderr (foreground) or syslog (daemon). */
#ifndef SDNMPI_LOG_H
#define SDNMPI_LOG_H

#include <syslog.h>

struct logger {
    const char *prog; /* prefix for stderr messages */
    int use_syslog;   /* 1 after daemonizing */
    int verbose;      /* emit LOG_DEBUG messages */
};

/* Log one line. LOG_DEBUG messages are dropped unless lg->verbose. */
void log_msg(const struct logger *lg, int prio, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
