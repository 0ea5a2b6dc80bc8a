/*
 * controller.h -- one process's connection to the sdnmpi controller: connect (with the
 * SDN_MPI_TIMEOUT_MS deadline), hello, register, plan_allreduce, plan_bcast, release, traffic,
 * phase. Every failure closes the connection (a late reply would otherwise desynchronise the
 * stream). A timeout or a protocol error closes it for good (`dead`): a hung or broken controller
 * should not cost one timeout per communicator. A connection the controller closed or refused (it
 * was restarted) may be opened again, after a back-off (250 ms, doubling up to 8 s) and at most
 * SDN_MPI_RECONNECT_TRIES times in a row without a successful request; no attempt is made before
 * the back-off has passed (the request fails at once: its caller falls back).
 *
 * Up to SDNMPI_CONN_AHEAD_MAX plan_allreduce requests may be "sent ahead" (sdnmpi_conn_plan_send:
 * SDN_MPI_Init sends the world's plan, a communicator's creation its own, so that the controller
 * plans and installs while the application computes) and each reply taken later by its request id
 * (sdnmpi_conn_plan_collect). The controller answers a connection's requests in order, so any
 * other use of the connection, or the collect of a later one, first reads the earlier replies and
 * keeps them for their collects: the stream stays in step whatever comes first. A request whose
 * communicator went away (sdnmpi_conn_plan_abandon) has its reply read and dropped.
 */
#ifndef SDNMPI_CONTROLLER_H
#define SDNMPI_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "env.h"
#include "rpc.h"
#include "schedule.h"

/* A plan_allreduce sent ahead: its id, the timeout it was sent with, whether its communicator went
 * away (the reply is dropped once read), and, once its reply was read, the result and the reply. */
#define SDNMPI_CONN_AHEAD_MAX 8
struct sdnmpi_conn_ahead {
    int64_t id;
    int timeout_ms;
    int abandoned;
    int read;
    int rc;           /* SDNMPI_CTRL_* */
    char why[256];
    struct sdnmpi_rpc_reply reply;
};

struct sdnmpi_conn {
    int fd;           /* -1 when not connected */
    int dead;         /* a timeout or protocol error closed it; no further attempts */
    int holds_job;    /* this connection registered the job (the controller releases the job
                         when it closes) */
    int failures;     /* closed or refused attempts since the last successful request */
    int64_t retry_at; /* no new attempt before this time (sdnmpi_now_ms); 0: none pending */
    int64_t next_id;  /* request ids 1, 2, ... */
    int64_t exchanges; /* requests sent and answered or failed (round trips, for timing.h) */
    double ctrl_s;    /* the controller's own time for the last request (reply timings total_s;
                         -1 if absent) */
    char server[64];  /* the controller's hello */
    /* the plan_allreduce requests sent ahead, oldest first (their replies come in this order) */
    int nahead;
    struct sdnmpi_conn_ahead ahead[SDNMPI_CONN_AHEAD_MAX];
};

/* Back-off after the n-th failure in a row (n >= 1): 250 ms, doubling, at most 8 s. */
int64_t sdnmpi_conn_backoff_ms(int n);

/* Results of the request functions. */
enum { SDNMPI_CTRL_OK = 0, SDNMPI_CTRL_REFUSED = 1, SDNMPI_CTRL_FAILED = -1 };

void sdnmpi_conn_init(struct sdnmpi_conn *c);

/* Connects unless already connected, without hello (register's reply names the server).
 * SDNMPI_CTRL_OK or SDNMPI_CTRL_FAILED, as sdnmpi_conn_open. */
int sdnmpi_conn_connect(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                        size_t whylen);

/* Connects and says hello unless already connected. SDNMPI_CTRL_OK, or SDNMPI_CTRL_FAILED (why
 * says what happened: the connection is dead, its back-off has not passed, or it failed now). */
int sdnmpi_conn_open(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                     size_t whylen);

/* hello on a connected connection (sdnmpi_conn_open's second half; the bench's floor times it
 * alone): SDNMPI_CTRL_OK or SDNMPI_CTRL_FAILED (the connection is then closed for good). */
int sdnmpi_conn_hello(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                      size_t whylen);

/* The requests need an open connection. SDNMPI_CTRL_OK; SDNMPI_CTRL_REFUSED: the controller
 * answered with an error (why = its reason; the connection stays usable); SDNMPI_CTRL_FAILED: the
 * connection broke or timed out and is now closed and dead. */
/* register: on success *job holds the job's id and token, and the connection holds the job. A
 * refusal closes the connection like a failed attempt (the caller tries again after the
 * back-off). locality (NULL: not wanted), nhosts entries: each host's leaf as `locate` gives it,
 * from the same reply; locality[0] = SDNMPI_NO_LOCALITY if the controller sent none. */
#define SDNMPI_NO_LOCALITY (-2)
int sdnmpi_conn_register(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                         const uint32_t *hosts, size_t nhosts, struct sdnmpi_job_ref *job,
                         int64_t *locality, char *why, size_t whylen);
/* locate: locality[i] = the leaf of hosts[i] as the controller knows it (-1: unknown). */
int sdnmpi_conn_locate(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                       const struct sdnmpi_job_ref *job,
                       const uint32_t *hosts, size_t nhosts, int64_t *locality, char *why,
                       size_t whylen);
int sdnmpi_conn_plan(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                     const struct sdnmpi_job_ref *job,
                     int64_t comm_id, const struct sdnmpi_host_steps *steps,
                     struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);
int sdnmpi_conn_plan_bcast(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                           const struct sdnmpi_job_ref *job,
                           int64_t comm_id, uint32_t root, const uint32_t *members,
                           size_t nmembers, struct sdnmpi_rpc_reply *reply, char *why,
                           size_t whylen);
int sdnmpi_conn_release(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                        const struct sdnmpi_job_ref *job,
                        char *why, size_t whylen);

/* traffic: a phase's demand (add: replace or add to it); reply holds flows, node_load,
 * plan_max_load, stored. */
int sdnmpi_conn_traffic(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                        const struct sdnmpi_job_ref *job, int phase,
                        const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                        struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);
/* phase: world rank `rank` enters `phase` (0: leaves its phase); reply holds installed, flows. */
int sdnmpi_conn_phase(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                      const struct sdnmpi_job_ref *job, int64_t rank, int phase,
                      struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);

/* plan_allreduce sent ahead: the request is written (*req_id: its id), its reply is read by
 * sdnmpi_conn_plan_collect (or earlier by any other use of the connection, which keeps it for the
 * collect). SDNMPI_CTRL_OK: sent; SDNMPI_CTRL_REFUSED: not sent (SDNMPI_CONN_AHEAD_MAX requests
 * are already ahead, or it cannot be encoded); SDNMPI_CTRL_FAILED: not connected, or the send
 * failed (the connection is closed: dead after a timeout, merely closed, as the controller
 * closing it would leave it, otherwise). */
int sdnmpi_conn_plan_send(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                          const struct sdnmpi_job_ref *job, int64_t comm_id,
                          const struct sdnmpi_host_steps *steps, int64_t *req_id, char *why,
                          size_t whylen);
/* The reply of request req_id sent ahead (read now, each reply before it first, until
 * SDN_MPI_TIMEOUT_MS each, unless already read), with sdnmpi_conn_plan's results; afterwards
 * that request is no longer ahead. SDNMPI_CTRL_FAILED if it was not ahead. */
int sdnmpi_conn_plan_collect(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                             int64_t req_id, struct sdnmpi_rpc_reply *reply, char *why,
                             size_t whylen);
/* Request req_id's communicator went away: its reply is dropped (now if it was read, else once
 * it is). Nothing to do if it is not ahead. Waits for nothing. */
void sdnmpi_conn_plan_abandon(struct sdnmpi_conn *c, int64_t req_id);

/* Whether the open connection still looks usable without waiting: the controller never sends
 * unprompted, so anything readable (its close, a reset) means it is gone; the connection is then
 * closed. Requests sent ahead are the exception: their replies are read (and kept) first. 0 if
 * not open. */
int sdnmpi_conn_alive(struct sdnmpi_conn *c);

/* Closes the connection (without marking it dead). A reply still unread of a request sent ahead
 * becomes a failure for its collect. */
void sdnmpi_conn_close(struct sdnmpi_conn *c);

/* Closes it and starts a new series of attempts: its failures are forgotten, while a back-off
 * already running still applies and a dead connection stays dead. */
void sdnmpi_conn_new_series(struct sdnmpi_conn *c);

/* Closes it and forgets its failures (dead included): a new controller registration. */
void sdnmpi_conn_reset(struct sdnmpi_conn *c);

#endif
