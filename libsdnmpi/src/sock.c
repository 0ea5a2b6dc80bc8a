/* sock.c -- TCP with deadlines. Sockets are non-blocking; every wait is a poll(2) bounded by the
 * caller's deadline, so no call here can hang. */
#include "sock.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int64_t sdnmpi_now_ms(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0; /* cannot fail for CLOCK_MONOTONIC on Linux */
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for `events` on fd until the deadline: 1 ready, -1 error/timeout (errno set). */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - sdnmpi_now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = events, .revents = 0};
        int r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

static int connect_one(const struct addrinfo *ai, int64_t deadline_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int one = 1;
    /* Requests are small and answered one at a time: do not let Nagle delay them. Failing to
     * set it only costs latency. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return fd;
    if (errno != EINPROGRESS && errno != EINTR)
        goto fail;
    if (wait_fd(fd, POLLOUT, deadline_ms) < 0)
        goto fail;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        goto fail;
    if (err != 0) {
        errno = err;
        goto fail;
    }
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

int sdnmpi_sock_connect(const char *host, const char *port, int64_t deadline_ms)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        errno = EHOSTUNREACH;
        return -1;
    }
    int fd = -1;
    int saved = ECONNREFUSED;
    for (const struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = connect_one(ai, deadline_ms);
        if (fd < 0)
            saved = errno;
        if (sdnmpi_now_ms() >= deadline_ms)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0)
        errno = saved;
    return fd;
}

int sdnmpi_sock_write_all(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            len -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(fd, POLLOUT, deadline_ms) < 0)
                return -1;
            continue;
        }
        if (w == 0)
            errno = ECONNRESET;
        return -1;
    }
    return 0;
}

int sdnmpi_sock_read_all(int fd, void *buf, size_t len, int64_t deadline_ms)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = recv(fd, p, len, 0);
        if (r > 0) {
            p += r;
            len -= (size_t)r;
            continue;
        }
        if (r == 0) {
            errno = ECONNRESET; /* the peer closed the connection */
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (wait_fd(fd, POLLIN, deadline_ms) < 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}
