/*
 * rpc.h -- the C side of docs/rpc.md (sdnmpi RPC version 1), and the only place that knows it:
 * 4-byte big-endian length + one msgpack map per message, requests hello / register / locate /
 * plan_allreduce / plan_bcast / release / traffic / phase, and their replies.
 */
#ifndef SDNMPI_RPC_H
#define SDNMPI_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "schedule.h"

#define SDNMPI_RPC_VERSION 1
#define SDNMPI_RPC_HEADER_BYTES 4      /* a frame's big-endian length */
#define SDNMPI_RPC_MAX_FRAME (1u << 20) /* body bytes */
#define SDNMPI_RPC_MAX_HOSTS 65536
#define SDNMPI_RPC_MAX_STEPS 64
#define SDNMPI_RPC_MAX_PAIRS 65536
#define SDNMPI_RPC_MAX_TOKEN 64 /* characters of a job token (the controller's have 32) */
#define SDNMPI_RPC_MAX_PHASE 64 /* traffic / phase: phases 0..64 (0 = the whole run / no phase) */
#define SDNMPI_RPC_MAX_TRAFFIC_PAIRS 65536 /* traffic: host pairs of one request */

/* traffic: one heavy host pair of a phase's demand (IPs in network byte order, bytes >= 1). */
struct sdnmpi_traffic_pair {
    uint32_t src, dst;
    int64_t bytes;
};

/* A registered job: its id and the token that authorises every request naming it (register's
 * reply). The token is a secret: never print it. */
struct sdnmpi_job_ref {
    int64_t id;
    char token[SDNMPI_RPC_MAX_TOKEN + 1];
};

/* One encoded request: header + body, at most 4 + SDNMPI_RPC_MAX_FRAME bytes. */
struct sdnmpi_rpc_buf {
    char *data;
    size_t len, cap;
    int overflow; /* the body would exceed SDNMPI_RPC_MAX_FRAME */
};

#define SDNMPI_RPC_MAX_LOADS 16
#define SDNMPI_RPC_MAX_TREES 8 /* plan_bcast: trees per (communicator, root) */

struct sdnmpi_rpc_reply {
    int64_t id;
    int ok;                                  /* status "ok" */
    char error[192];                         /* the reason of an error reply (may be truncated) */
    char server[64];                         /* hello */
    int64_t job;                             /* register; 0 if absent */
    char token[SDNMPI_RPC_MAX_TOKEN + 1];    /* register: the job's token; "" if absent */
    int64_t flows;                           /* plan_allreduce; -1 if absent */
    size_t n_max_load;                       /* plan_allreduce: entries of max_load ... */
    int64_t max_load[SDNMPI_RPC_MAX_LOADS];  /* ... the first SDNMPI_RPC_MAX_LOADS of them */
    double total_s, plan_s, install_s;       /* timings; -1 if absent */
    char group[16];                          /* plan_bcast: the multicast address ("" if absent) */
    int64_t port;                            /* plan_bcast: the UDP port; -1 if absent */
    int64_t switches;                        /* plan_bcast: switches on the tree; -1 if absent */
    char top[24];                            /* plan_bcast: dpid of the top switch ("" if none) */
    int cached;                              /* plan_allreduce/plan_bcast: answered from the cache */
    size_t n_trees;                          /* plan_bcast: entries of `trees` (0: absent, an older
                                                controller: use group/port above) ... */
    char tree_group[SDNMPI_RPC_MAX_TREES][16]; /* ... the first SDNMPI_RPC_MAX_TREES of them */
    int64_t tree_port[SDNMPI_RPC_MAX_TREES];
    int64_t node_load;                       /* traffic: NL_D of the phase's demand; -1 if absent */
    int64_t plan_max_load;                   /* traffic: max flows on a link (an int there); -1 if
                                                absent or not planned yet */
    int stored;                              /* traffic: demand stored for later; -1 if absent */
    int installed;                           /* phase: the phase's routes are in place; -1 if absent */
    /* locate: the caller points `locality` at locality_cap entries before the call (decoding
     * keeps both, so zero-initialise every reply struct); n_locality = the reply's entries, of
     * which the first locality_cap are stored */
    int64_t *locality;
    size_t locality_cap, n_locality;
};

/* Encoders: 0 on success, -1 on allocation failure or oversized body (buf->overflow).
 * The buffer must be zero-initialised before the first use and freed with sdnmpi_rpc_buf_free. */
int sdnmpi_rpc_encode_hello(struct sdnmpi_rpc_buf *buf, int64_t id);
int sdnmpi_rpc_encode_register(struct sdnmpi_rpc_buf *buf, int64_t id, const uint32_t *hosts,
                               size_t nhosts);
int sdnmpi_rpc_encode_locate(struct sdnmpi_rpc_buf *buf, int64_t id,
                             const struct sdnmpi_job_ref *job, const uint32_t *hosts, size_t nhosts);
int sdnmpi_rpc_encode_plan_allreduce(struct sdnmpi_rpc_buf *buf, int64_t id,
                                     const struct sdnmpi_job_ref *job,
                                     int64_t comm, const char *planner,
                                     const struct sdnmpi_host_steps *steps);
/* plan_bcast: members are the host IPs of the communicator's ranks (duplicates allowed), root
 * the root rank's; all network byte order. trees: 1..SDNMPI_RPC_MAX_TREES trees wanted (1 leaves
 * the field out, as clients before issue 17 did). */
int sdnmpi_rpc_encode_plan_bcast(struct sdnmpi_rpc_buf *buf, int64_t id,
                                 const struct sdnmpi_job_ref *job, int64_t comm, uint32_t root,
                                 const uint32_t *members, size_t nmembers, int trees);
int sdnmpi_rpc_encode_release(struct sdnmpi_rpc_buf *buf, int64_t id,
                              const struct sdnmpi_job_ref *job);
/* traffic (SPEC of issue 15, docs/rpc.md): phase 0..SDNMPI_RPC_MAX_PHASE, 1..
 * SDNMPI_RPC_MAX_TRAFFIC_PAIRS pairs with src != dst and bytes >= 1 (anything else: -1, nothing
 * encoded); add = 0 replaces the phase's demand, 1 adds to it; planner NULL or "" leaves it out. */
int sdnmpi_rpc_encode_traffic(struct sdnmpi_rpc_buf *buf, int64_t id,
                              const struct sdnmpi_job_ref *job, int phase,
                              const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                              const char *planner);
/* phase: world rank `rank` (>= 0) enters phase 1..SDNMPI_RPC_MAX_PHASE, or leaves its phase (0). */
int sdnmpi_rpc_encode_phase(struct sdnmpi_rpc_buf *buf, int64_t id,
                            const struct sdnmpi_job_ref *job, int64_t rank, int phase);
void sdnmpi_rpc_buf_free(struct sdnmpi_rpc_buf *buf);

/* Decodes one reply body. 0 if it is a well-formed version-1 reply, -1 otherwise (a token longer
 * than SDNMPI_RPC_MAX_TOKEN makes it malformed). */
int sdnmpi_rpc_decode_reply(const char *body, size_t len, struct sdnmpi_rpc_reply *out);

/* The two halves of sdnmpi_rpc_call, for a request whose reply is read later (controller.h,
 * "sent ahead"): send writes the whole request, recv reads one reply and checks its id; the same
 * results and failures as sdnmpi_rpc_call. */
int sdnmpi_rpc_send(int fd, const struct sdnmpi_rpc_buf *req, int64_t deadline_ms, char *what,
                    size_t whatlen);
int sdnmpi_rpc_recv(int fd, int64_t id, int64_t deadline_ms, struct sdnmpi_rpc_reply *reply,
                    char *what, size_t whatlen);

/* Sends the encoded request and waits for its reply until deadline_ms (sdnmpi_now_ms scale).
 * 0: a reply with the request's id arrived (ok or error, see reply->ok); the connection stays in
 * step. -1: send/receive failure, timeout, end of stream, a malformed or mismatched reply; the
 * stream cannot be trusted any more and the caller must close it. `what` describes the failure
 * for the log (at least 128 bytes). */
int sdnmpi_rpc_call(int fd, const struct sdnmpi_rpc_buf *req, int64_t id, int64_t deadline_ms,
                    struct sdnmpi_rpc_reply *reply, char *what, size_t whatlen);

#endif
