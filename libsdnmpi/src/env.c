/* env.c -- parses the SDN_MPI_* environment knobs. Nothing else in the library reads the
 * environment (the profiler, libsdnmpi_prof.so, is built without it). */
#include "env.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

#define DEFAULT_TIMEOUT_MS 5000
#define MAX_TIMEOUT_MS 3600000

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

static int parse_bool(const char *name, int dflt)
{
    const char *v = env(name);
    if (v == NULL)
        return dflt;
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"))
        return 1;
    if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))
        return 0;
    sdnmpi_warn("ignoring %s=%s (want 0 or 1)", name, v);
    return dflt;
}

/* SDN_MPI_LIB_COMM (plan_comm.h): 0 (off), 1 (made at Init: the default, also when malformed),
 * "defer" (completed where first needed). */
static int parse_lib_comm(void)
{
    const char *v = env("SDN_MPI_LIB_COMM");
    if (v != NULL && (!strcasecmp(v, "defer") || !strcmp(v, "2")))
        return 2;
    return parse_bool("SDN_MPI_LIB_COMM", 1);
}

/* A non-negative integer with an optional binary suffix k/m/g; "unlimited" gives UINT64_MAX if
 * allowed. 1: set and read into *out; 0: unset; -1: malformed (one warning line). */
static int read_bytes(const char *name, int allow_unlimited, uint64_t *out)
{
    const char *v = env(name);
    if (v == NULL)
        return 0;
    if (allow_unlimited && !strcasecmp(v, "unlimited")) {
        *out = UINT64_MAX;
        return 1;
    }
    if (!isdigit((unsigned char)v[0]))
        goto bad;
    errno = 0;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0)
        goto bad;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end != '\0' || (shift && n > (UINT64_MAX >> shift)))
        goto bad;
    *out = (uint64_t)n << shift;
    return 1;
bad:
    sdnmpi_warn("ignoring %s=%s (want a byte count%s)", name, v,
                allow_unlimited ? " or \"unlimited\"" : "");
    return -1;
}

/* read_bytes' value, or dflt when unset or malformed. */
static uint64_t parse_bytes(const char *name, uint64_t dflt, int allow_unlimited)
{
    uint64_t n;
    return read_bytes(name, allow_unlimited, &n) == 1 ? n : dflt;
}

long sdnmpi_env_long(const char *name, long dflt, long lo, long hi)
{
    const char *v = env(name);
    if (v == NULL)
        return dflt;
    errno = 0;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi) {
        sdnmpi_warn("ignoring %s=%s (want an integer in %ld..%ld)", name, v, lo, hi);
        return dflt;
    }
    return n;
}

int sdnmpi_env_split_hostport(const char *text, char *host, size_t hostlen, char *port,
                              size_t portlen)
{
    const char *colon;
    const char *hstart = text;
    size_t hlen;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close == NULL || close[1] != ':')
            return -1;
        hstart = text + 1;
        hlen = (size_t)(close - hstart);
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL)
            return -1;
        hlen = (size_t)(colon - text);
    }
    const char *p = colon + 1;
    size_t plen = strlen(p);
    if (hlen == 0 || hlen >= hostlen || plen == 0 || plen >= portlen)
        return -1;
    for (size_t i = 0; i < plen; i++)
        if (!isdigit((unsigned char)p[i]))
            return -1;
    long portnum = strtol(p, NULL, 10);
    if (portnum < 1 || portnum > 65535)
        return -1;
    memcpy(host, hstart, hlen);
    host[hlen] = '\0';
    memcpy(port, p, plen + 1);
    return 0;
}

/* A string knob into dst[cap]; too long: a warning and "". */
static void parse_str(const char *name, char *dst, size_t cap)
{
    const char *v = env(name);
    dst[0] = '\0';
    if (v == NULL)
        return;
    if (strlen(v) < cap)
        memcpy(dst, v, strlen(v) + 1);
    else
        sdnmpi_warn("ignoring %s=%s (too long)", name, v);
}

static void parse_subnet(struct sdnmpi_config *cfg)
{
    const char *v = env("SDN_MPI_FABRIC_SUBNET");
    if (v == NULL)
        return;
    char addr[INET_ADDRSTRLEN];
    const char *slash = strchr(v, '/');
    size_t alen = slash ? (size_t)(slash - v) : strlen(v);
    struct in_addr in;
    long len = 32;
    if (alen == 0 || alen >= sizeof addr)
        goto bad;
    memcpy(addr, v, alen);
    addr[alen] = '\0';
    if (inet_pton(AF_INET, addr, &in) != 1)
        goto bad;
    if (slash != NULL) {
        char *end = NULL;
        errno = 0;
        len = strtol(slash + 1, &end, 10);
        if (errno != 0 || end == slash + 1 || *end != '\0' || len < 0 || len > 32)
            goto bad;
    }
    cfg->subnet_mask = len == 0 ? 0 : (uint32_t)(0xffffffffu << (32 - len));
    cfg->subnet = ntohl(in.s_addr) & cfg->subnet_mask;
    cfg->has_subnet = 1;
    return;
bad:
    sdnmpi_warn("ignoring SDN_MPI_FABRIC_SUBNET=%s (want a.b.c.d/len)", v);
}

void sdnmpi_env_load(struct sdnmpi_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->disable = parse_bool("SDN_MPI_DISABLE", 0);
    cfg->verbose = parse_bool("SDN_MPI_VERBOSE", 0);

    const char *ctrl = env("SDN_MPI_CONTROLLER");
    if (ctrl != NULL) {
        if (sdnmpi_env_split_hostport(ctrl, cfg->ctrl_host, sizeof cfg->ctrl_host, cfg->ctrl_port,
                                      sizeof cfg->ctrl_port) == 0)
            cfg->has_controller = 1;
        else
            sdnmpi_warn("ignoring SDN_MPI_CONTROLLER=%s (want host:port)", ctrl);
    }
    cfg->timeout_ms = (int)sdnmpi_env_long("SDN_MPI_TIMEOUT_MS", DEFAULT_TIMEOUT_MS, 1,
                                           MAX_TIMEOUT_MS);
    cfg->reconnect_tries = (int)sdnmpi_env_long("SDN_MPI_RECONNECT_TRIES",
                                                SDNMPI_DEFAULT_RECONNECT_TRIES, 0,
                                                SDNMPI_MAX_RECONNECT_TRIES);
    cfg->min_bytes_set = read_bytes("SDN_MPI_MIN_BYTES", 0, &cfg->min_bytes) == 1;
    if (!cfg->min_bytes_set)
        cfg->min_bytes = 0;
    cfg->max_bytes = parse_bytes("SDN_MPI_MAX_BYTES", UINT64_MAX, 1);
    cfg->reorder = parse_bool("SDN_MPI_REORDER", 1);
    cfg->plan_ahead = parse_bool("SDN_MPI_PLAN_AHEAD", 1);
    cfg->lib_comm = parse_lib_comm();
    cfg->rab_min = parse_bytes("SDN_MPI_RABENSEIFNER_MIN", SDNMPI_DEFAULT_RAB_MIN, 1);
    cfg->hier_min = parse_bytes("SDN_MPI_HIER_MIN", SDNMPI_DEFAULT_HIER_MIN, 1);
    /* unset or malformed: by the leaf layout; a byte count as large as that marker: unlimited */
    uint64_t segment;
    if (read_bytes("SDN_MPI_HIER_SEGMENT", 1, &segment) == 1)
        cfg->hier_segment = segment >= SDNMPI_HIER_SEGMENT_BY_LAYOUT ? UINT64_MAX : segment;
    else
        cfg->hier_segment = SDNMPI_HIER_SEGMENT_BY_LAYOUT;
    cfg->hier_depth = (int)sdnmpi_env_long("SDN_MPI_HIER_DEPTH", 0, 0, SDNMPI_HIER_MAX_DEPTH);
    parse_str("SDN_MPI_HIER_TRACE", cfg->hier_trace, sizeof cfg->hier_trace);
    cfg->alltoall_window = (int)sdnmpi_env_long("SDN_MPI_ALLTOALL_WINDOW",
                                                SDNMPI_DEFAULT_ALLTOALL_WINDOW, 1, 1 << 20);
    cfg->alltoall_segment = parse_bytes("SDN_MPI_ALLTOALL_SEGMENT", SDNMPI_DEFAULT_ALLTOALL_SEGMENT, 0);
    cfg->alltoall_grid = parse_bool("SDN_MPI_ALLTOALL_GRID", SDNMPI_DEFAULT_ALLTOALL_GRID);
    cfg->reduce_chain_min = parse_bytes("SDN_MPI_REDUCE_CHAIN_MIN", SDNMPI_DEFAULT_REDUCE_CHAIN_MIN, 1);
    cfg->reduce_segment = parse_bytes("SDN_MPI_REDUCE_SEGMENT", SDNMPI_DEFAULT_REDUCE_SEGMENT, 0);
    cfg->allgather_cycles_min = parse_bytes("SDN_MPI_ALLGATHER_CYCLES_MIN",
                                            SDNMPI_DEFAULT_ALLGATHER_CYCLES_MIN, 1);

    parse_str("SDN_MPI_PLANNER", cfg->planner, sizeof cfg->planner);
    parse_str("SDN_MPI_TRAFFIC", cfg->traffic, sizeof cfg->traffic);
    parse_str("SDN_MPI_TRAFFIC_PLANNER", cfg->traffic_planner, sizeof cfg->traffic_planner);
    cfg->traffic_max_bytes = parse_bytes("SDN_MPI_TRAFFIC_MAX_BYTES", SDNMPI_TRAFFIC_DEFAULT_MAX_BYTES, 0);
    cfg->traffic_min_share = (int)sdnmpi_env_long("SDN_MPI_TRAFFIC_MIN_SHARE",
                                                  SDNMPI_TRAFFIC_DEFAULT_MIN_SHARE, 0, 100);

    const char *fip = env("SDN_MPI_FABRIC_IP");
    if (fip != NULL) {
        struct in_addr in;
        if (inet_pton(AF_INET, fip, &in) == 1) {
            cfg->has_fabric_ip = 1;
            cfg->fabric_ip = in.s_addr;
        } else {
            sdnmpi_warn("ignoring SDN_MPI_FABRIC_IP=%s (want an IPv4 address)", fip);
        }
    }
    parse_subnet(cfg);
    cfg->fake_hosts = (int)sdnmpi_env_long("SDN_MPI_FAKE_HOSTS", 0, 0, SDNMPI_FAKE_HOSTS_MAX);

    cfg->bcast_min_bytes = parse_bytes("SDN_MPI_BCAST_MIN_BYTES", SDNMPI_BCAST_DEFAULT_MIN_BYTES, 1);
    cfg->bcast_min_hosts = (int)sdnmpi_env_long("SDN_MPI_BCAST_MIN_HOSTS",
                                                SDNMPI_BCAST_DEFAULT_MIN_HOSTS, 2, INT_MAX);
    cfg->bcast_rate_mbps = (int)sdnmpi_env_long("SDN_MPI_BCAST_RATE_MBPS",
                                                SDNMPI_BCAST_DEFAULT_RATE_MBPS, 1,
                                                SDNMPI_BCAST_MAX_RATE_MBPS);
    cfg->bcast_trees = (int)sdnmpi_env_long("SDN_MPI_BCAST_TREES", SDNMPI_BCAST_DEFAULT_TREES, 1,
                                            SDNMPI_BCAST_MAX_TREES);
    cfg->bcast_rounds = (int)sdnmpi_env_long("SDN_MPI_BCAST_ROUNDS", SDNMPI_BCAST_DEFAULT_ROUNDS, 1,
                                             SDNMPI_BCAST_MAX_ROUNDS);
    cfg->bcast_idle_ms = (int)sdnmpi_env_long("SDN_MPI_BCAST_IDLE_MS", SDNMPI_BCAST_DEFAULT_IDLE_MS,
                                              1, SDNMPI_BCAST_MAX_IDLE_MS);
    cfg->bcast_datagram = (int)sdnmpi_env_long("SDN_MPI_BCAST_DATAGRAM",
                                               SDNMPI_BCAST_DEFAULT_DATAGRAM,
                                               SDNMPI_BCAST_MIN_DATAGRAM, SDNMPI_BCAST_MAX_DATAGRAM);
}
