/*
 * mcast.h -- the UDP sockets of SDN_MPI_Bcast: one sender on the root, one receiver on every
 * other rank (several ranks of one host each have their own; Linux gives every socket joined to
 * the group its own copy of a datagram).
 */
#ifndef SDNMPI_MCAST_H
#define SDNMPI_MCAST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A sender to group:port (network byte order / host byte order), bound to iface_ip (so that the
 * datagrams leave from, and carry, the root's fabric address, which the switches' tree matches),
 * IP_MULTICAST_IF = iface_ip, TTL 1, IP_MULTICAST_LOOP on (ranks on the root's own host receive
 * the loopback copy; the kernel makes none if no local socket joined), a 1 s send timeout.
 * Returns the fd, or -1 with `why` set. */
int sdnmpi_mcast_sender(uint32_t group, uint16_t port, uint32_t iface_ip, char *why, size_t whylen);

/* A non-blocking receiver: SO_REUSEADDR, bound to group:port, joined to the group on the
 * interface of iface_ip, IP_MULTICAST_ALL off, a receive buffer of `rcvbuf` bytes (forced if
 * the process may, else as large as net.core.rmem_max allows). Returns the fd, or -1 with `why`
 * set. */
int sdnmpi_mcast_receiver(uint32_t group, uint16_t port, uint32_t iface_ip, int rcvbuf, char *why,
                          size_t whylen);

/* One datagram of header + payload. 0 sent; 1 the kernel had no room (ENOBUFS/EAGAIN: try
 * again later); -1 error (errno set). */
int sdnmpi_mcast_send(int fd, const void *hdr, size_t hdrlen, const void *payload, size_t len);

/* One datagram into buf (non-blocking). Its length; 0 if none is waiting; -1 error (errno set). */
ssize_t sdnmpi_mcast_recv(int fd, void *buf, size_t cap);

/* Whether `ip` (network byte order) is an IPv4 multicast address. */
int sdnmpi_mcast_is_group(uint32_t ip);

void sdnmpi_mcast_close(int *fd);

#endif
