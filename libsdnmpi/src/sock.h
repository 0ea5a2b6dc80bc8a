/* sock.h -- TCP with deadlines: connect, write and read everything or fail. */
#ifndef SDNMPI_SOCK_H
#define SDNMPI_SOCK_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t sdnmpi_now_ms(void);

/* A connected, non-blocking, close-on-exec TCP socket to host:port, trying every address
 * getaddrinfo gives until deadline_ms (sdnmpi_now_ms() scale). -1 on failure (errno set). */
int sdnmpi_sock_connect(const char *host, const char *port, int64_t deadline_ms);

/* Write/read exactly len bytes before deadline_ms. 0 on success, -1 on error, timeout (errno
 * ETIMEDOUT) or end of stream (errno ECONNRESET). */
int sdnmpi_sock_write_all(int fd, const void *buf, size_t len, int64_t deadline_ms);
int sdnmpi_sock_read_all(int fd, void *buf, size_t len, int64_t deadline_ms);

#endif
