/* tx.h - send raw Ethernet frames with an AF_PACKET socket. */
#ifndef SDNMPI_TX_H
#define SDNMPI_TX_H

#include <stddef.h>
#include <stdint.h>

/* Open a send-only AF_PACKET raw socket (protocol 0: it receives nothing).
 * Returns the descriptor or -1 with errno set (EPERM without CAP_NET_RAW). */
int tx_open(void);

/* Send one complete Ethernet frame (header included) on ifindex.
 * Returns 0 or -1 with errno set. */
int tx_send(int fd, unsigned ifindex, const uint8_t *frame, size_t len);

/* Close the socket. Returns 0 or -1 with errno set. */
int tx_close(int fd);

#endif
