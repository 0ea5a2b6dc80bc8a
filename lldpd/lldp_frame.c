/* lldp_frame.c - build an LLDPDU (IEEE 802.1AB) into a bounded buffer. */
#include "lldp_frame.h"

#include <string.h>

enum {
    TLV_END = 0,
    TLV_CHASSIS_ID = 1,
    TLV_PORT_ID = 2,
    TLV_TTL = 3,
    TLV_SYSTEM_NAME = 5,
    TLV_MGMT_ADDR = 8,
};

enum {
    CHASSIS_SUBTYPE_MAC = 4,
    PORT_SUBTYPE_IFNAME = 5,
    MGMT_ADDR_SUBTYPE_IPV4 = 1,
    MGMT_IF_SUBTYPE_IFINDEX = 2,
};

static const uint8_t lldp_dst[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};

/* A bounded write cursor: every append checks the remaining space. */
struct cursor {
    uint8_t *buf;
    size_t cap;
    size_t len;
    int overflow;
};

static void put_bytes(struct cursor *c, const void *data, size_t n)
{
    if (c->overflow || n > c->cap - c->len) {
        c->overflow = 1;
        return;
    }
    memcpy(c->buf + c->len, data, n);
    c->len += n;
}

static void put_u8(struct cursor *c, uint8_t v)
{
    put_bytes(c, &v, 1);
}

static void put_u16(struct cursor *c, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)(v & 0xff)};
    put_bytes(c, b, sizeof(b));
}

static void put_u32(struct cursor *c, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16),
                    (uint8_t)(v >> 8), (uint8_t)(v & 0xff)};
    put_bytes(c, b, sizeof(b));
}

/* TLV header: 7-bit type, 9-bit length. */
static void put_tlv_header(struct cursor *c, unsigned type, size_t len)
{
    if (type > 0x7f || len > 0x1ff) {
        c->overflow = 1;
        return;
    }
    put_u16(c, (uint16_t)((type << 9) | len));
}

/* Length of s, but at most max bytes (strnlen without relying on it). */
static size_t bounded_len(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0')
        n++;
    return n;
}

/* Management address TLV: IPv4 + ifIndex, no OID. */
static void put_mgmt_ipv4(struct cursor *c, const uint8_t ipv4[4], uint32_t ifindex)
{
    put_tlv_header(c, TLV_MGMT_ADDR, 1 + 1 + 4 + 1 + 4 + 1);
    put_u8(c, 1 + 4); /* address string length: subtype + address */
    put_u8(c, MGMT_ADDR_SUBTYPE_IPV4);
    put_bytes(c, ipv4, 4);
    put_u8(c, MGMT_IF_SUBTYPE_IFINDEX);
    put_u32(c, ifindex);
    put_u8(c, 0); /* OID string length */
}

int lldp_frame_build(uint8_t *buf, size_t cap,
                     const struct lldp_frame_info *info)
{
    struct cursor c = {buf, cap, 0, 0};
    size_t port_len, name_len;

    if (buf == NULL || info == NULL || info->port_name == NULL ||
        info->sys_name == NULL)
        return -1;

    /* Port ID: subtype octet + 1..255 octets of name. */
    port_len = bounded_len(info->port_name, LLDP_MAX_STRING - 1);
    if (port_len == 0)
        return -1;
    name_len = bounded_len(info->sys_name, LLDP_MAX_STRING);

    /* Ethernet header */
    put_bytes(&c, lldp_dst, sizeof(lldp_dst));
    put_bytes(&c, info->mac, sizeof(info->mac));
    put_u16(&c, LLDP_ETHERTYPE);

    /* 1. Chassis ID: MAC address */
    put_tlv_header(&c, TLV_CHASSIS_ID, 1 + sizeof(info->mac));
    put_u8(&c, CHASSIS_SUBTYPE_MAC);
    put_bytes(&c, info->mac, sizeof(info->mac));

    /* 2. Port ID: interface name */
    put_tlv_header(&c, TLV_PORT_ID, 1 + port_len);
    put_u8(&c, PORT_SUBTYPE_IFNAME);
    put_bytes(&c, info->port_name, port_len);

    /* 3. TTL */
    put_tlv_header(&c, TLV_TTL, 2);
    put_u16(&c, info->ttl);

    /* 4. System name (may be empty) */
    put_tlv_header(&c, TLV_SYSTEM_NAME, name_len);
    put_bytes(&c, info->sys_name, name_len);

    /* 5. Management addresses: this interface's IPv4 first, then the host's others */
    if (info->n_extra > LLDP_MAX_EXTRA_ADDRS)
        return -1;
    if (info->has_ipv4)
        put_mgmt_ipv4(&c, info->ipv4, info->ifindex);
    for (size_t i = 0; i < info->n_extra; i++)
        put_mgmt_ipv4(&c, info->extra_ipv4[i], info->extra_ifindex[i]);

    /* 6. End of LLDPDU */
    put_tlv_header(&c, TLV_END, 0);

    /* Pad to the Ethernet minimum. */
    while (!c.overflow && c.len < LLDP_ETH_MIN_FRAME)
        put_u8(&c, 0);

    if (c.overflow || c.len > (size_t)0x7fffffff)
        return -1;
    return (int)c.len;
}
