/* env.h -- the SDN_MPI_* environment knobs (see README.md for the list). */
#ifndef SDNMPI_ENV_H
#define SDNMPI_ENV_H

#include <stddef.h>
#include <stdint.h>

#define SDNMPI_HOST_MAX 256
#define SDNMPI_PORT_MAX 16
#define SDNMPI_PLANNER_MAX 16
#define SDNMPI_FAKE_HOSTS_MAX 254
#define SDNMPI_PATH_MAX 4096

struct sdnmpi_config {
    int disable;                      /* SDN_MPI_DISABLE: always PMPI_Allreduce */
    int verbose;                      /* SDN_MPI_VERBOSE: one stderr line per decision */
    int has_controller;               /* SDN_MPI_CONTROLLER=host:port was given and parsed */
    char ctrl_host[SDNMPI_HOST_MAX];
    char ctrl_port[SDNMPI_PORT_MAX];
    int timeout_ms;                   /* SDN_MPI_TIMEOUT_MS: connect and per-reply timeout */
    int reconnect_tries;              /* SDN_MPI_RECONNECT_TRIES: attempts in a row (controller.h) */
    uint64_t min_bytes;               /* SDN_MPI_MIN_BYTES: smaller messages use PMPI */
    int min_bytes_set;                /*   whether it was set (unset: each collective's default,
                                           sdnmpi_cfg_min_bytes) */
    uint64_t max_bytes;               /* SDN_MPI_MAX_BYTES: larger messages use PMPI */
    uint64_t rab_min;                 /* SDN_MPI_RABENSEIFNER_MIN: Rabenseifner from here on */
    uint64_t hier_min;                /* SDN_MPI_HIER_MIN: hierarchical allreduce from here on */
    uint64_t hier_segment;            /* SDN_MPI_HIER_SEGMENT: its pipeline's segment bytes
                                         (SDNMPI_HIER_SEGMENT_BY_LAYOUT: unset) */
    int hier_depth;                   /* SDN_MPI_HIER_DEPTH: segments in its first step at once, 0 = the default */
    char hier_trace[SDNMPI_PATH_MAX]; /* SDN_MPI_HIER_TRACE: its per-step trace's directory ("" = off) */
    int alltoall_window;              /* SDN_MPI_ALLTOALL_WINDOW: exchange steps in flight */
    uint64_t alltoall_segment;        /* SDN_MPI_ALLTOALL_SEGMENT: bytes per message, 0 = a block */
    int alltoall_grid;                /* SDN_MPI_ALLTOALL_GRID: the leaf grid schedule if it fits */
    uint64_t reduce_chain_min;        /* SDN_MPI_REDUCE_CHAIN_MIN: Reduce's chains from here on */
    uint64_t reduce_segment;          /* SDN_MPI_REDUCE_SEGMENT: their segment bytes */
    uint64_t allgather_cycles_min;    /* SDN_MPI_ALLGATHER_CYCLES_MIN: Allgather's cycles from here on */
    int reorder;                      /* SDN_MPI_REORDER: order the algorithms' ranks by leaf */
    int plan_ahead;                   /* SDN_MPI_PLAN_AHEAD: request the world's plan at Init */
    int lib_comm;                     /* SDN_MPI_LIB_COMM: the library's own communicator
                                         (plan_comm.h: SDNMPI_LIB_COMM_*) */
    char planner[SDNMPI_PLANNER_MAX]; /* SDN_MPI_PLANNER: "" = controller default */
    int has_fabric_ip;                /* SDN_MPI_FABRIC_IP */
    uint32_t fabric_ip;               /*   network byte order */
    int has_subnet;                   /* SDN_MPI_FABRIC_SUBNET=a.b.c.d/len */
    uint32_t subnet, subnet_mask;     /*   host byte order */
    int fake_hosts;                   /* SDN_MPI_FAKE_HOSTS=N (test only), 0 = off */
    /* traffic-aware job routing (traffic.c, trace_read.c) */
    char traffic[SDNMPI_PATH_MAX];    /* SDN_MPI_TRAFFIC: a trace sent at Init ("" = none) */
    char traffic_planner[SDNMPI_PLANNER_MAX]; /* SDN_MPI_TRAFFIC_PLANNER: "" = controller default */
    uint64_t traffic_max_bytes;       /* SDN_MPI_TRAFFIC_MAX_BYTES: largest rank file read */
    int traffic_min_share;            /* SDN_MPI_TRAFFIC_MIN_SHARE: % of a phase's heaviest pair */
    /* SDN_MPI_Bcast (bcast*.c) */
    uint64_t bcast_min_bytes;         /* SDN_MPI_BCAST_MIN_BYTES: smaller messages use PMPI */
    int bcast_min_hosts;              /* SDN_MPI_BCAST_MIN_HOSTS: communicators on fewer use PMPI */
    int bcast_rate_mbps;              /* SDN_MPI_BCAST_RATE_MBPS: the root's rate per tree */
    int bcast_trees;                  /* SDN_MPI_BCAST_TREES: trees to split a message over */
    int bcast_rounds;                 /* SDN_MPI_BCAST_ROUNDS: multicast rounds before PMPI */
    int bcast_idle_ms;                /* SDN_MPI_BCAST_IDLE_MS: receivers' wait after a round */
    int bcast_datagram;               /* SDN_MPI_BCAST_DATAGRAM: UDP payload bytes (header incl.) */
};

/* SDN_MPI_RABENSEIFNER_MIN's default: 8-32 KiB allreduces by recursive doubling were 0.5-0.9x
 * Open MPI's on the benchmark fabric (README's Benchmarks); at 4 KiB it was 1.5-1.7x slower than
 * Rabenseifner (docs/bench-notebook.md, "Allreduce: the selection rule, measured"). */
#define SDNMPI_DEFAULT_RAB_MIN 4096
/* SDN_MPI_Allreduce's smallest message off PMPI when SDN_MPI_MIN_BYTES is unset
 * (sdnmpi_cfg_min_bytes). Below 2 KiB both run recursive doubling (Open MPI 4.1's fixed rules take
 * it below 8 KiB at 8-15 ranks), and the library's took 0.95-1.07x PMPI_Allreduce's time on the
 * same routes (8 B-1 KiB, geometric mean of six 8-host jobs): nothing to win, the dispatcher and
 * the agreement step to pay. At 2 KiB it was faster in all six (0.82x; docs/bench-notebook.md,
 * "Small messages: the PMPI threshold", 20261129-131211). */
#define SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES 2048
/* SDN_MPI_HIER_MIN's and SDN_MPI_HIER_SEGMENT's defaults (bench/README.md, "Allreduce: the
 * selection rule"). */
#define SDNMPI_DEFAULT_HIER_MIN 16384
/* SDN_MPI_HIER_SEGMENT unset: the segment follows the leaf layout (sdnmpi_hier_segment_bytes,
 * allreduce_algorithms.h); a value no byte count reaches, passed on like one. */
#define SDNMPI_HIER_SEGMENT_BY_LAYOUT (UINT64_MAX - 1)
/* SDN_MPI_HIER_DEPTH's upper end (0, its default, is SDNMPI_HIER_DEFAULT_DEPTH, allreduce_algorithms.h). */
#define SDNMPI_HIER_MAX_DEPTH 64
/* SDN_MPI_ALLTOALL_WINDOW's default: two steps of the pairwise exchange in flight (measured
 * against one and all p - 1: libsdnmpi/README.md, SDN_MPI_Alltoall). */
#define SDNMPI_DEFAULT_ALLTOALL_WINDOW 2
/* SDN_MPI_ALLTOALL_SEGMENT's and SDN_MPI_ALLTOALL_GRID's defaults: a block is one message (32 KiB
 * segments were not faster beyond the noise), and the leaf grid where the leaves are equal: it
 * needs exactly the cut bound's step times, and once the bench fabric lost no packets it ran at
 * 1.21-1.30x the bound under dmodk against the shifts' 1.58-1.75x, back to back (1.18-1.38x
 * under all three routings: libsdnmpi/README.md,
 * SDN_MPI_Alltoall). */
#define SDNMPI_DEFAULT_ALLTOALL_SEGMENT 0
#define SDNMPI_DEFAULT_ALLTOALL_GRID 1
/* SDN_MPI_REDUCE_CHAIN_MIN's and SDN_MPI_REDUCE_SEGMENT's defaults: the two pipelined chains
 * (reduce_chain.c) from 64 KiB on (every size the SDN path takes by default), in 8 KiB segments:
 * on the bench fabric they beat reduce-scatter + gather at 64 KiB too, 64-71 ms against 77-92 ms
 * (libsdnmpi/README.md, SDN_MPI_Reduce). */
#define SDNMPI_DEFAULT_REDUCE_CHAIN_MIN (64u * 1024u)
#define SDNMPI_DEFAULT_REDUCE_SEGMENT (8u * 1024u)
/* SDN_MPI_ALLGATHER_CYCLES_MIN's default: Allgather along the two cycles (allgather_cycles.c)
 * from a 256 KiB receive buffer on, as Reduce's chains; not measured yet. */
#define SDNMPI_DEFAULT_ALLGATHER_CYCLES_MIN (256u * 1024u)
/* SDN_MPI_RECONNECT_TRIES's default: with the back-off (controller.h) about 2 minutes. */
#define SDNMPI_DEFAULT_RECONNECT_TRIES 20
#define SDNMPI_MAX_RECONNECT_TRIES 1000
#define SDNMPI_TRAFFIC_DEFAULT_MAX_BYTES (64u << 20)
/* A trace's pairs below 1 % of their phase's heaviest are left to the default routes: a profiled
 * phase also holds the few bytes of its barriers and reductions, which would otherwise count as
 * flows as heavy as the exchange's (docs/jobroute.md, "Measured on Mininet"). */
#define SDNMPI_TRAFFIC_DEFAULT_MIN_SHARE 1
#define SDNMPI_BCAST_DEFAULT_MIN_BYTES 65536
/* With two hosts there is one receiving host: nothing for the switches to copy. */
#define SDNMPI_BCAST_DEFAULT_MIN_HOSTS 3
#define SDNMPI_BCAST_DEFAULT_RATE_MBPS 18
#define SDNMPI_BCAST_MAX_RATE_MBPS 1000000
/* Two trees: one per spine on the demo and bench fabrics (2 x 18 Mbit/s fits their host links). */
#define SDNMPI_BCAST_DEFAULT_TREES 2
#define SDNMPI_BCAST_MAX_TREES 8 /* SDNMPI_RPC_MAX_TREES */
#define SDNMPI_BCAST_DEFAULT_ROUNDS 5
#define SDNMPI_BCAST_MAX_ROUNDS 100
#define SDNMPI_BCAST_DEFAULT_IDLE_MS 200
#define SDNMPI_BCAST_MAX_IDLE_MS 600000
#define SDNMPI_BCAST_DEFAULT_DATAGRAM 1472 /* Ethernet MTU 1500 - IPv4 20 - UDP 8 */
#define SDNMPI_BCAST_MIN_DATAGRAM 64
#define SDNMPI_BCAST_MAX_DATAGRAM 65507

/* The size from which a collective takes its SDN path: SDN_MPI_MIN_BYTES when it was set (0
 * included: every size), else the collective's default `dflt`. Every input is agreed at
 * SDN_MPI_Init, so all ranks decide alike. */
static inline uint64_t sdnmpi_cfg_min_bytes(const struct sdnmpi_config *cfg, uint64_t dflt)
{
    return cfg->min_bytes_set ? cfg->min_bytes : dflt;
}

/* Reads the environment into *cfg (defaults for unset or invalid knobs; invalid ones are
 * reported with sdnmpi_warn). */
void sdnmpi_env_load(struct sdnmpi_config *cfg);

/* The integer knob `name`, or dflt when it is unset, empty or not an integer in lo..hi (then a
 * warning line, sdnmpi_warn). For knobs read outside sdnmpi_env_load (init_exchange.c's test
 * knobs). */
long sdnmpi_env_long(const char *name, long dflt, long lo, long hi);

/* Splits "host:port" / "[v6]:port"; 0 on success. */
int sdnmpi_env_split_hostport(const char *text, char *host, size_t hostlen, char *port,
                              size_t portlen);

#endif
