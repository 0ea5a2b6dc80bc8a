/*
 * bcast_wire.h -- SDN_MPI_Bcast's datagrams on the wire, and the root's pacing.
 *
 * Header (20 bytes, big-endian): magic "SDNB" | tree tag (job, communicator, root) | epoch (the
 * tree's call counter) | round (16 bits) | kind (16 bits: 0 data, 1 end of round) | index (data:
 * the datagram's number; end: the datagrams sent in the round). Datagram i carries payload bytes
 * [i * payload, min((i + 1) * payload, bytes)) of the message.
 */
#ifndef SDNMPI_BCAST_WIRE_H
#define SDNMPI_BCAST_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define SDNMPI_WIRE_MAGIC 0x53444e42u /* "SDNB" */
#define SDNMPI_WIRE_HEADER 20
/* Bytes a datagram adds on an Ethernet link besides its UDP payload: Ethernet 14, IPv4 20,
 * UDP 8 (what a Linux qdisc counts). */
#define SDNMPI_WIRE_OVERHEAD 42

enum { SDNMPI_WIRE_DATA = 0, SDNMPI_WIRE_END = 1 };

struct sdnmpi_wire_hdr {
    uint32_t tag, epoch;
    uint16_t round, kind;
    uint32_t index;
};

void sdnmpi_wire_encode(const struct sdnmpi_wire_hdr *h, unsigned char out[SDNMPI_WIRE_HEADER]);
/* 0 if buf holds a header with the right magic (len >= SDNMPI_WIRE_HEADER), else -1. */
int sdnmpi_wire_decode(const unsigned char *buf, size_t len, struct sdnmpi_wire_hdr *h);

/* Nanoseconds of CLOCK_MONOTONIC. */
int64_t sdnmpi_now_ns(void);

/* Paces the root's datagrams at rate_mbps (wire bytes). pace() returns when the next datagram of
 * `wire_bytes` may go: it sleeps while ahead of schedule; when behind (the process was not
 * scheduled), it catches up by at most a short burst (10 ms, or 64 KiB at the rate if that is
 * less) and forgets the rest, so that a stall never turns into a long burst that overflows the
 * switch queues. */
struct sdnmpi_pacer {
    int64_t start_ns;
    double due_ns;      /* schedule time of the next datagram, relative to start_ns */
    double ns_per_byte;
    int64_t burst_ns;   /* how far behind it may catch up at full speed */
};

void sdnmpi_pacer_init(struct sdnmpi_pacer *p, double rate_mbps);
void sdnmpi_pace(struct sdnmpi_pacer *p, size_t wire_bytes);

#endif
