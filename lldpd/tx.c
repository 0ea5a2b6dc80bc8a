/* tx.c - send raw Ethernet frames with an AF_PACKET socket. */
#include "tx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int tx_open(void)
{
    return socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
}

int tx_send(int fd, unsigned ifindex, const uint8_t *frame, size_t len)
{
    struct sockaddr_ll sll;
    ssize_t sent;

    if (fd < 0 || frame == NULL || len < ETH_HLEN || ifindex == 0 ||
        ifindex > 0x7fffffffu) {
        errno = EINVAL;
        return -1;
    }
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = (int)ifindex;
    sll.sll_protocol = htons(ETH_P_LLDP);
    sll.sll_halen = ETH_ALEN;
    memcpy(sll.sll_addr, frame, ETH_ALEN); /* destination MAC */

    sent = sendto(fd, frame, len, 0, (const struct sockaddr *)&sll,
                  sizeof(sll));
    if (sent < 0)
        return -1;
    if ((size_t)sent != len) {
        errno = EMSGSIZE;
        return -1;
    }
    return 0;
}

int tx_close(int fd)
{
    return close(fd);
}
