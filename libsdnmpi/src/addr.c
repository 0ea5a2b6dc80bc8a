/* addr.c -- picks this rank's fabric address from the interfaces (see addr.h). */
#include "addr.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The local IPv4 address the kernel would use towards the controller (a UDP connect sends
 * nothing). 0 on success. */
static int controller_route_addr(const struct sdnmpi_config *cfg, struct in_addr *local)
{
    if (!cfg->has_controller)
        return -1;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (getaddrinfo(cfg->ctrl_host, cfg->ctrl_port, &hints, &res) != 0)
        return -1;
    int rc = -1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct sockaddr_in sin;
        socklen_t len = sizeof sin;
        if (connect(fd, res->ai_addr, res->ai_addrlen) == 0
            && getsockname(fd, (struct sockaddr *)&sin, &len) == 0 && sin.sin_family == AF_INET) {
            *local = sin.sin_addr;
            rc = 0;
        }
        (void)close(fd); /* a UDP socket that sent nothing */
    }
    freeaddrinfo(res);
    return rc;
}

static int usable(const struct ifaddrs *ifa)
{
    if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET)
        return 0;
    if (!(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
        return 0;
    const struct sockaddr_in *sin = (const struct sockaddr_in *)ifa->ifa_addr;
    return (ntohl(sin->sin_addr.s_addr) >> 24) != 127;
}

static uint32_t addr_of(const struct ifaddrs *ifa)
{
    return ((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
}

uint32_t sdnmpi_fabric_ip(const struct sdnmpi_config *cfg, int world_rank, char *how,
                          size_t howlen)
{
    how[0] = '\0';
    if (cfg->fake_hosts > 0) {
        snprintf(how, howlen, "SDN_MPI_FAKE_HOSTS=%d (test only)", cfg->fake_hosts);
        return htonl((10u << 24) | (255u << 16) | (uint32_t)(world_rank % cfg->fake_hosts + 1));
    }
    if (cfg->has_fabric_ip) {
        snprintf(how, howlen, "SDN_MPI_FABRIC_IP");
        return cfg->fabric_ip;
    }
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) {
        snprintf(how, howlen, "no interface list, loopback");
        return htonl(INADDR_LOOPBACK);
    }
    uint32_t ip = 0;
    if (cfg->has_subnet) {
        for (const struct ifaddrs *ifa = list; ifa != NULL && ip == 0; ifa = ifa->ifa_next) {
            if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET
                || !(ifa->ifa_flags & IFF_UP))
                continue;
            if ((ntohl(addr_of(ifa)) & cfg->subnet_mask) == cfg->subnet) {
                ip = addr_of(ifa);
                snprintf(how, howlen, "SDN_MPI_FABRIC_SUBNET, interface %s", ifa->ifa_name);
            }
        }
        if (ip == 0)
            snprintf(how, howlen, "no address in SDN_MPI_FABRIC_SUBNET; ");
    }
    /* The management interface: the one holding the address that routes to the controller. */
    char mgmt[IF_NAMESIZE + 1] = "";
    struct in_addr local;
    if (ip == 0 && controller_route_addr(cfg, &local) == 0) {
        for (const struct ifaddrs *ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
            if (ifa->ifa_addr != NULL && ifa->ifa_addr->sa_family == AF_INET
                && addr_of(ifa) == local.s_addr) {
                snprintf(mgmt, sizeof mgmt, "%s", ifa->ifa_name);
                break;
            }
        }
    }
    size_t used = strnlen(how, howlen);
    for (const struct ifaddrs *ifa = list; ifa != NULL && ip == 0; ifa = ifa->ifa_next) {
        if (usable(ifa) && strcmp(ifa->ifa_name, mgmt) != 0) {
            ip = addr_of(ifa);
            snprintf(how + used, howlen - used, "interface %s%s%s", ifa->ifa_name,
                     mgmt[0] ? ", not the controller's " : "", mgmt);
        }
    }
    for (const struct ifaddrs *ifa = list; ifa != NULL && ip == 0; ifa = ifa->ifa_next) {
        if (usable(ifa)) {
            ip = addr_of(ifa);
            snprintf(how + used, howlen - used, "interface %s (the only one)", ifa->ifa_name);
        }
    }
    freeifaddrs(list);
    if (ip == 0) {
        snprintf(how + used, howlen - used, "no interface, loopback");
        ip = htonl(INADDR_LOOPBACK);
    }
    return ip;
}
