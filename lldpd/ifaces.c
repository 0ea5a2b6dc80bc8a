/* ifaces.c - enumerate interfaces with getifaddrs(3). */
#include "ifaces.h"

#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* ifa_name of an AF_INET entry may be a label such as "eth0:1". */
static int name_matches(const char *label, const char *ifname)
{
    size_t n = strnlen(ifname, IFNAMSIZ);
    return strncmp(label, ifname, n) == 0 &&
           (label[n] == '\0' || label[n] == ':');
}

static int wanted(const char *name, const char (*only)[IFNAMSIZ],
                  size_t n_only)
{
    size_t i;
    if (n_only == 0)
        return 1;
    for (i = 0; i < n_only; i++)
        if (strncmp(name, only[i], IFNAMSIZ) == 0)
            return 1;
    return 0;
}

static int usable_link(const struct ifaddrs *ifa)
{
    const struct sockaddr_ll *sll;
    static const uint8_t zero[6] = {0};

    if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_PACKET ||
        ifa->ifa_name == NULL)
        return 0;
    if (!(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
        return 0;
    sll = (const struct sockaddr_ll *)(const void *)ifa->ifa_addr;
    if (sll->sll_halen != 6 || memcmp(sll->sll_addr, zero, 6) == 0)
        return 0;
    if (sll->sll_ifindex <= 0)
        return 0;
    return strnlen(ifa->ifa_name, IFNAMSIZ) < IFNAMSIZ;
}

int ifaces_list(struct iface *out, size_t max,
                const char (*only)[IFNAMSIZ], size_t n_only)
{
    struct ifaddrs *head, *ifa;
    size_t count = 0, i;

    if (out == NULL || (n_only > 0 && only == NULL))
        return -1;
    if (getifaddrs(&head) != 0)
        return -1;

    /* Pass 1: links (AF_PACKET entries carry MAC and ifindex). */
    for (ifa = head; ifa != NULL && count < max; ifa = ifa->ifa_next) {
        const struct sockaddr_ll *sll;
        struct iface *it;

        if (!usable_link(ifa) || !wanted(ifa->ifa_name, only, n_only))
            continue;
        sll = (const struct sockaddr_ll *)(const void *)ifa->ifa_addr;
        it = &out[count++];
        memset(it, 0, sizeof(*it));
        memcpy(it->name, ifa->ifa_name, strnlen(ifa->ifa_name, IFNAMSIZ));
        it->ifindex = (unsigned)sll->sll_ifindex;
        memcpy(it->mac, sll->sll_addr, 6);
    }

    /* Pass 2: first IPv4 address of each selected link. */
    for (ifa = head; ifa != NULL; ifa = ifa->ifa_next) {
        const struct sockaddr_in *sin;

        if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != AF_INET ||
            ifa->ifa_name == NULL)
            continue;
        sin = (const struct sockaddr_in *)(const void *)ifa->ifa_addr;
        for (i = 0; i < count; i++) {
            if (out[i].has_ipv4 || !name_matches(ifa->ifa_name, out[i].name))
                continue;
            memcpy(out[i].ipv4, &sin->sin_addr.s_addr, 4);
            out[i].has_ipv4 = 1;
        }
    }

    freeifaddrs(head);
    return (int)count;
}
