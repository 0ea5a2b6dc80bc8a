/* ifaces.h - enumerate interfaces LLDP frames should be sent on. */
#ifndef SDNMPI_IFACES_H
#define SDNMPI_IFACES_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#define IFACES_MAX 256 /* interfaces handled per round */

struct iface {
    char name[IFNAMSIZ];
    unsigned ifindex;
    uint8_t mac[6];
    int has_ipv4;
    uint8_t ipv4[4]; /* network byte order, valid if has_ipv4 */
};

/* Fill out[0..max) with the usable interfaces: administratively up, not
 * loopback, with a 6-byte non-zero MAC address. The IPv4 address is the
 * first one found on the interface, if any. If n_only > 0, only interfaces
 * whose names appear in only[0..n_only) are returned.
 * Returns the number of entries written, or -1 with errno set. */
int ifaces_list(struct iface *out, size_t max,
                const char (*only)[IFNAMSIZ], size_t n_only);

#endif
