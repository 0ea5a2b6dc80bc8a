/* logline.h -- one diagnostic line on stderr, "<tag>[<rank>]: <message>", in one write(2) so that
 * ranks' lines do not interleave. Shared by log.c (libsdnmpi) and the profiler (prof_*.c). */
#ifndef SDNMPI_LOGLINE_H
#define SDNMPI_LOGLINE_H

#include <stdarg.h>

/* rank < 0 prints "?" for the rank. Long messages are truncated. */
void sdnmpi_log_vline(const char *tag, int rank, const char *fmt, va_list ap);

#endif
