/* mcast.c -- UDP multicast sockets (mcast.h). */
#include "mcast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

int sdnmpi_mcast_is_group(uint32_t ip)
{
    return (ntohl(ip) >> 28) == 0xe;
}

void sdnmpi_mcast_close(int *fd)
{
    if (*fd >= 0)
        close(*fd); /* nothing to do about a failing close of a socket */
    *fd = -1;
}

static int fail(int *fd, char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "%s: %s", what, strerror(errno));
    sdnmpi_mcast_close(fd);
    return -1;
}

int sdnmpi_mcast_sender(uint32_t group, uint16_t port, uint32_t iface_ip, char *why, size_t whylen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(&fd, why, whylen, "socket");
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_addr.s_addr = iface_ip, .sin_port = 0};
    if (bind(fd, (const struct sockaddr *)&local, sizeof local) != 0)
        return fail(&fd, why, whylen, "bind to the fabric address");
    struct in_addr ifaddr = {.s_addr = iface_ip};
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof ifaddr) != 0)
        return fail(&fd, why, whylen, "IP_MULTICAST_IF");
    unsigned char ttl = 1, loop = 1;
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0)
        return fail(&fd, why, whylen, "IP_MULTICAST_TTL");
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0)
        return fail(&fd, why, whylen, "IP_MULTICAST_LOOP");
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
        return fail(&fd, why, whylen, "SO_SNDTIMEO");
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_addr.s_addr = group, .sin_port = htons(port)};
    if (connect(fd, (const struct sockaddr *)&dst, sizeof dst) != 0)
        return fail(&fd, why, whylen, "connect to the group");
    return fd;
}

int sdnmpi_mcast_receiver(uint32_t group, uint16_t port, uint32_t iface_ip, int rcvbuf, char *why,
                          size_t whylen)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fail(&fd, why, whylen, "socket");
    int one = 1, zero = 0;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        return fail(&fd, why, whylen, "SO_REUSEADDR");
    /* SO_RCVBUFFORCE needs CAP_NET_ADMIN; without it, SO_RCVBUF up to net.core.rmem_max. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0
        && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0)
        return fail(&fd, why, whylen, "SO_RCVBUF");
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = group, .sin_port = htons(port)};
    if (bind(fd, (const struct sockaddr *)&addr, sizeof addr) != 0)
        return fail(&fd, why, whylen, "bind to the group");
    struct ip_mreq mreq = {.imr_multiaddr.s_addr = group, .imr_interface.s_addr = iface_ip};
    if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0)
        return fail(&fd, why, whylen, "IP_ADD_MEMBERSHIP on the fabric interface");
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero) != 0)
        return fail(&fd, why, whylen, "IP_MULTICAST_ALL");
    return fd;
}

int sdnmpi_mcast_send(int fd, const void *hdr, size_t hdrlen, const void *payload, size_t len)
{
    struct iovec iov[2] = {{.iov_base = (void *)hdr, .iov_len = hdrlen},
                           {.iov_base = (void *)payload, .iov_len = len}};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len > 0 ? 2 : 1};
    for (;;) {
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == ENOBUFS || errno == EAGAIN || errno == EWOULDBLOCK)
            return 1;
        return -1;
    }
}

ssize_t sdnmpi_mcast_recv(int fd, void *buf, size_t cap)
{
    for (;;) {
        ssize_t n = recv(fd, buf, cap, MSG_DONTWAIT | MSG_TRUNC);
        if (n >= 0)
            return n;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        /* An ICMP error queued on the socket is not fatal for a receiver. */
        if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH)
            continue;
        return -1;
    }
}
