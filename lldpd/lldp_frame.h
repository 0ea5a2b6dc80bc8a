/* lldp_frame.h - build an LLDPDU (Ethernet frame) into a bounded buffer. */
#ifndef SDNMPI_LLDP_FRAME_H
#define SDNMPI_LLDP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define LLDP_ETHERTYPE 0x88cc
#define LLDP_ETH_MIN_FRAME 60 /* Ethernet minimum without FCS */
#define LLDP_MAX_STRING 255   /* longest string we put into a TLV */
#define LLDP_MAX_EXTRA_ADDRS 8 /* other interfaces' IPv4 addresses per frame */

/* Largest frame lldp_frame_build() can produce: header, all TLVs with
 * maximum-length strings, end TLV. Callers may use this as buffer size. */
#define LLDP_FRAME_MAX 1514

/* Everything that goes into one LLDPDU. Strings are NUL-terminated. */
struct lldp_frame_info {
    uint8_t mac[6];        /* source MAC and chassis ID */
    const char *port_name; /* port ID (interface name) */
    uint16_t ttl;          /* seconds, 0 = shutdown LLDPDU */
    const char *sys_name;  /* system name, truncated to 255 bytes */
    int has_ipv4;          /* add a management address TLV */
    uint8_t ipv4[4];       /* network byte order */
    uint32_t ifindex;      /* interface number in the mgmt address TLV */
    /* The host's other IPv4 addresses (e.g. its management network's), each as one more
     * management address TLV after the first: the controller accepts a job's registration
     * from any address the job's hosts advertise. */
    size_t n_extra;
    uint8_t extra_ipv4[LLDP_MAX_EXTRA_ADDRS][4];
    uint32_t extra_ifindex[LLDP_MAX_EXTRA_ADDRS];
};

/* Write the frame into buf (capacity cap). Returns the frame length
 * (>= LLDP_ETH_MIN_FRAME, zero padded) or -1 if it would not fit or the
 * input is invalid. */
int lldp_frame_build(uint8_t *buf, size_t cap,
                     const struct lldp_frame_info *info);

#endif
