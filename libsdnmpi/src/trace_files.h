/* trace_files.h -- the rank files of a trace: oxton-result<rank>.json members of a gzip'd (or
 * plain) ustar archive, or files of a directory. Each is read whole into memory, one at a time,
 * bounded by max_bytes. */
#ifndef SDNMPI_TRACE_FILES_H
#define SDNMPI_TRACE_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Called per rank file: its name (for messages), its rank (from the name), its bytes. 0 goes on,
 * -1 stops (the callback wrote why). */
typedef int (*sdnmpi_trace_file_fn)(void *arg, const char *name, long rank, const char *data,
                                    size_t len, char *why, size_t whylen);

/* Walks path (a directory, or an archive). 0 if every rank file was handed to fn, -1 with why on a
 * failure (unreadable, malformed archive, a file above max_bytes, fn's -1). Names that are not
 * oxton-result<rank>.json are skipped. */
int sdnmpi_trace_files(const char *path, uint64_t max_bytes, sdnmpi_trace_file_fn fn, void *arg,
                       char *why, size_t whylen);

/* The rank in "oxton-result<rank>.json" (basename of name), or -1 if it is not such a name. */
long sdnmpi_trace_rank_of(const char *name);

#endif
