/* logline.c -- see logline.h. */
#include "logline.h"

#include <stdio.h>
#include <unistd.h>

#define LINE_MAX_BYTES 1024

void sdnmpi_log_vline(const char *tag, int rank, const char *fmt, va_list ap)
{
    char line[LINE_MAX_BYTES];
    int n;
    if (rank >= 0)
        n = snprintf(line, sizeof line, "%s[%d]: ", tag, rank);
    else
        n = snprintf(line, sizeof line, "%s[?]: ", tag);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
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
