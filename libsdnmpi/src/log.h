/* log.h -- stderr lines prefixed "sdnmpi[rank]: ". */
#ifndef SDNMPI_LOG_H
#define SDNMPI_LOG_H

/* One line if SDN_MPI_VERBOSE is on. */
void sdnmpi_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One line, always (misconfiguration, unexpected failures). */
void sdnmpi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether sdnmpi_log prints (to skip building expensive messages). */
int sdnmpi_log_enabled(void);

#endif
