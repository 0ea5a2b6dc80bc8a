/* bcast_wire.c -- datagram headers and pacing (bcast_wire.h). */
#include "bcast_wire.h"

#include <errno.h>
#include <time.h>

/* How far the pacer may fall behind and still catch up at full speed: 10 ms, or the time 64 KiB
 * take at the rate if that is shorter. A sleep that overshoots under CPU load is made up for, a
 * long stall is not (its burst would overflow the switch queues). */
#define BURST_MAX_NS 10000000.0
#define BURST_BYTES 65536.0

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

void sdnmpi_wire_encode(const struct sdnmpi_wire_hdr *h, unsigned char out[SDNMPI_WIRE_HEADER])
{
    put32(out, SDNMPI_WIRE_MAGIC);
    put32(out + 4, h->tag);
    put32(out + 8, h->epoch);
    put16(out + 12, h->round);
    put16(out + 14, h->kind);
    put32(out + 16, h->index);
}

int sdnmpi_wire_decode(const unsigned char *buf, size_t len, struct sdnmpi_wire_hdr *h)
{
    if (len < SDNMPI_WIRE_HEADER || get32(buf) != SDNMPI_WIRE_MAGIC)
        return -1;
    h->tag = get32(buf + 4);
    h->epoch = get32(buf + 8);
    h->round = get16(buf + 12);
    h->kind = get16(buf + 14);
    h->index = get32(buf + 16);
    return 0;
}

int64_t sdnmpi_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0; /* cannot fail for CLOCK_MONOTONIC on Linux */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sdnmpi_pacer_init(struct sdnmpi_pacer *p, double rate_mbps)
{
    p->start_ns = sdnmpi_now_ns();
    p->due_ns = 0.0;
    p->ns_per_byte = 8000.0 / (rate_mbps > 0 ? rate_mbps : 1.0);
    double burst = BURST_BYTES * p->ns_per_byte;
    p->burst_ns = (int64_t)(burst < BURST_MAX_NS ? burst : BURST_MAX_NS);
}

void sdnmpi_pace(struct sdnmpi_pacer *p, size_t wire_bytes)
{
    int64_t target = p->start_ns + (int64_t)p->due_ns;
    int64_t now = sdnmpi_now_ns();
    if (now < target) {
        struct timespec ts = {.tv_sec = target / 1000000000, .tv_nsec = target % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    } else if (now - target > p->burst_ns) {
        p->start_ns += now - target - p->burst_ns;
    }
    p->due_ns += (double)wire_bytes * p->ns_per_byte;
}
