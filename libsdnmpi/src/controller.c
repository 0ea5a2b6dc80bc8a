/* controller.c -- the connection to the controller: deadlines, request ids, failure handling. */
#include "controller.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sock.h"

void sdnmpi_conn_init(struct sdnmpi_conn *c)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->next_id = 1;
}

#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS 8000

int64_t sdnmpi_conn_backoff_ms(int n)
{
    int64_t ms = BACKOFF_FIRST_MS;
    for (int i = 1; i < n && ms < BACKOFF_MAX_MS; i++)
        ms *= 2;
    return ms < BACKOFF_MAX_MS ? ms : BACKOFF_MAX_MS;
}

void sdnmpi_conn_close(struct sdnmpi_conn *c)
{
    int kept = 0;
    for (int i = 0; i < c->nahead; i++) {
        struct sdnmpi_conn_ahead *a = &c->ahead[i];
        if (a->abandoned)
            continue; /* nobody will collect it */
        if (!a->read) {
            a->read = 1;
            a->rc = SDNMPI_CTRL_FAILED;
            snprintf(a->why, sizeof a->why, "the connection closed before the reply");
        }
        if (kept != i)
            c->ahead[kept] = *a;
        kept++;
    }
    c->nahead = kept;
    if (c->fd >= 0)
        close(c->fd); /* nothing to do about a failing close of a socket */
    c->fd = -1;
    c->holds_job = 0;
}

void sdnmpi_conn_new_series(struct sdnmpi_conn *c)
{
    sdnmpi_conn_close(c);
    c->failures = 0; /* the back-off already running (retry_at) still applies */
}

void sdnmpi_conn_reset(struct sdnmpi_conn *c)
{
    sdnmpi_conn_new_series(c);
    c->dead = 0;
    c->retry_at = 0;
}

static void kill_conn(struct sdnmpi_conn *c)
{
    sdnmpi_conn_close(c);
    c->dead = 1;
}

/* The controller closed or refused the connection: a new attempt after the back-off. */
static void drop_conn(struct sdnmpi_conn *c)
{
    sdnmpi_conn_close(c);
    c->failures++;
    c->retry_at = sdnmpi_now_ms() + sdnmpi_conn_backoff_ms(c->failures);
}

/* Whether a failed connect or exchange is one a restarted controller causes: refused, reset or
 * closed before the deadline (errno as the failing call left it). */
static int restart_symptom(int err, int64_t deadline)
{
    return sdnmpi_now_ms() < deadline
           && (err == ECONNREFUSED || err == ECONNRESET || err == EPIPE || err == ENOTCONN);
}

/* Forgets request i sent ahead (the later ones move up). */
static void ahead_remove(struct sdnmpi_conn *c, int i)
{
    memmove(&c->ahead[i], &c->ahead[i + 1], (size_t)(c->nahead - i - 1) * sizeof c->ahead[0]);
    c->nahead--;
    memset(&c->ahead[c->nahead], 0, sizeof c->ahead[0]);
}

/* Reads the reply of request i sent ahead (every earlier one is read) into c->ahead[i] (once). A
 * failure closes the connection as `exchange` would (quiet = 0), or only closes it (quiet = 1:
 * sdnmpi_conn_alive, where the controller's close is an ordinary end). */
static void ahead_read(struct sdnmpi_conn *c, int i, int64_t deadline, int quiet)
{
    struct sdnmpi_conn_ahead *a = &c->ahead[i];
    if (a->read)
        return;
    struct sdnmpi_rpc_reply *r = &a->reply;
    memset(r, 0, sizeof *r);
    errno = 0;
    int rc = sdnmpi_rpc_recv(c->fd, a->id, deadline, r, a->why, sizeof a->why);
    int err = errno;
    c->ctrl_s = rc == 0 ? r->total_s : -1.0; /* (the send counted the exchange) */
    a->read = 1; /* before a close, which would call it unread */
    if (rc != 0) {
        a->rc = SDNMPI_CTRL_FAILED;
        if (quiet)
            sdnmpi_conn_close(c);
        else if (restart_symptom(err, deadline))
            drop_conn(c);
        else
            kill_conn(c);
        return;
    }
    a->rc = r->ok ? SDNMPI_CTRL_OK : SDNMPI_CTRL_REFUSED;
    if (r->ok)
        c->failures = 0;
    else
        snprintf(a->why, sizeof a->why, "controller error: %s",
                 r->error[0] ? r->error : "(no reason)");
}

/* Reads the replies sent ahead in order, up to and including request `upto`'s (0: all of them),
 * each until timeout_ms from when its turn comes; drops those of abandoned requests. Returns the
 * index of `upto`, or -1. */
static int ahead_read_upto(struct sdnmpi_conn *c, int64_t upto, int timeout_ms, int quiet)
{
    int i = 0;
    while (i < c->nahead) {
        int64_t id = c->ahead[i].id;
        ahead_read(c, i, sdnmpi_now_ms() + timeout_ms, quiet);
        if (i >= c->nahead || c->ahead[i].id != id)
            continue; /* abandoned, and dropped by the close of a failed read */
        if (id == upto)
            return i;
        if (c->ahead[i].abandoned)
            ahead_remove(c, i);
        else
            i++;
    }
    return -1;
}

/* The index of request req_id sent ahead, or -1. */
static int ahead_find(const struct sdnmpi_conn *c, int64_t req_id)
{
    for (int i = 0; i < c->nahead; i++)
        if (c->ahead[i].id == req_id)
            return i;
    return -1;
}

/* The first unread request sent ahead, or -1. */
static int ahead_unread(const struct sdnmpi_conn *c)
{
    for (int i = 0; i < c->nahead; i++)
        if (!c->ahead[i].read)
            return i;
    return -1;
}

int sdnmpi_conn_alive(struct sdnmpi_conn *c)
{
    if (c->fd < 0)
        return 0;
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN, .revents = 0};
    int r = poll(&pfd, 1, 0);
    if (r <= 0)
        return 1; /* nothing pending (or EINTR: look again next time) */
    int i = ahead_unread(c);
    if (i >= 0) {
        /* the reply of a request sent ahead, or the controller's close */
        int64_t id = c->ahead[i].id;
        ahead_read(c, i, sdnmpi_now_ms() + c->ahead[i].timeout_ms, 1);
        if (i < c->nahead && c->ahead[i].id == id && c->ahead[i].abandoned)
            ahead_remove(c, i);
        return sdnmpi_conn_alive(c);
    }
    sdnmpi_conn_close(c); /* not a failed attempt: the next one may come at once */
    return 0;
}

/* Encoded request in buf with id `id`: one exchange. A successful reply to anything but hello and
 * register ends a series of failed attempts. */
static int exchange(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                    struct sdnmpi_rpc_buf *buf, int64_t id, struct sdnmpi_rpc_reply *reply,
                    int resets, char *why, size_t whylen)
{
    (void)ahead_read_upto(c, 0, cfg->timeout_ms, 0); /* keep the stream in step */
    if (c->fd < 0) {
        if (c->nahead > 0 && c->ahead[c->nahead - 1].rc != SDNMPI_CTRL_OK)
            snprintf(why, whylen, "not connected (the reply sent ahead: %s)",
                     c->ahead[c->nahead - 1].why);
        else
            snprintf(why, whylen, "not connected");
        sdnmpi_rpc_buf_free(buf);
        return SDNMPI_CTRL_FAILED;
    }
    int64_t deadline = sdnmpi_now_ms() + cfg->timeout_ms;
    errno = 0;
    int rc = sdnmpi_rpc_call(c->fd, buf, id, deadline, reply, why, whylen);
    int err = errno;
    sdnmpi_rpc_buf_free(buf);
    c->exchanges++;
    c->ctrl_s = rc == 0 ? reply->total_s : -1.0;
    if (rc != 0) {
        if (restart_symptom(err, deadline))
            drop_conn(c);
        else
            kill_conn(c);
        return SDNMPI_CTRL_FAILED;
    }
    if (resets && reply->ok)
        c->failures = 0;
    if (!reply->ok) {
        snprintf(why, whylen, "controller error: %s", reply->error[0] ? reply->error : "(no reason)");
        return SDNMPI_CTRL_REFUSED;
    }
    return SDNMPI_CTRL_OK;
}

static int encode_failed(struct sdnmpi_rpc_buf *buf, char *why, size_t whylen)
{
    snprintf(why, whylen, "%s", buf->overflow ? "request larger than 1 MiB"
                                : buf->len == 0 ? "invalid request values" : "out of memory");
    sdnmpi_rpc_buf_free(buf);
    return SDNMPI_CTRL_REFUSED;
}

int sdnmpi_conn_connect(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                        size_t whylen)
{
    if (c->fd >= 0)
        return SDNMPI_CTRL_OK;
    if (c->dead) {
        snprintf(why, whylen, "an earlier failure closed the connection");
        return SDNMPI_CTRL_FAILED;
    }
    if (!cfg->has_controller) {
        snprintf(why, whylen, "SDN_MPI_CONTROLLER is not set");
        return SDNMPI_CTRL_FAILED;
    }
    int64_t now = sdnmpi_now_ms();
    if (c->failures > cfg->reconnect_tries) {
        snprintf(why, whylen, "gave up after %d failed attempts, SDN_MPI_RECONNECT_TRIES=%d",
                 c->failures, cfg->reconnect_tries);
        return SDNMPI_CTRL_FAILED;
    }
    if (now < c->retry_at) {
        snprintf(why, whylen, "connection lost, next attempt in %" PRId64 " ms", c->retry_at - now);
        return SDNMPI_CTRL_FAILED;
    }
    int64_t deadline = now + cfg->timeout_ms;
    c->fd = sdnmpi_sock_connect(cfg->ctrl_host, cfg->ctrl_port, deadline);
    if (c->fd < 0) {
        int err = errno;
        snprintf(why, whylen, "cannot connect to %s:%s: %s", cfg->ctrl_host, cfg->ctrl_port,
                 strerror(err));
        if (restart_symptom(err, deadline))
            drop_conn(c);
        else
            c->dead = 1;
        return SDNMPI_CTRL_FAILED;
    }
    snprintf(c->server, sizeof c->server, "(unnamed)");
    return SDNMPI_CTRL_OK;
}

int sdnmpi_conn_open(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                     size_t whylen)
{
    if (c->fd >= 0)
        return SDNMPI_CTRL_OK;
    int rc = sdnmpi_conn_connect(c, cfg, why, whylen);
    if (rc != SDNMPI_CTRL_OK)
        return rc;
    return sdnmpi_conn_hello(c, cfg, why, whylen);
}

int sdnmpi_conn_hello(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                      size_t whylen)
{
    int rc;
    struct sdnmpi_rpc_buf buf = {0};
    struct sdnmpi_rpc_reply reply = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_hello(&buf, id)) {
        encode_failed(&buf, why, whylen);
        kill_conn(c);
        return SDNMPI_CTRL_FAILED;
    }
    rc = exchange(c, cfg, &buf, id, &reply, 0, why, whylen);
    if (rc == SDNMPI_CTRL_REFUSED)
        kill_conn(c); /* a controller that refuses hello will not serve us */
    if (rc != SDNMPI_CTRL_OK)
        return SDNMPI_CTRL_FAILED;
    snprintf(c->server, sizeof c->server, "%s", reply.server[0] ? reply.server : "(unnamed)");
    return SDNMPI_CTRL_OK;
}

int sdnmpi_conn_register(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                         const uint32_t *hosts, size_t nhosts, struct sdnmpi_job_ref *job,
                         int64_t *locality, char *why, size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    struct sdnmpi_rpc_reply reply = {.locality = locality, .locality_cap = locality ? nhosts : 0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_register(&buf, id, hosts, nhosts))
        return encode_failed(&buf, why, whylen);
    int rc = exchange(c, cfg, &buf, id, &reply, 0, why, whylen);
    if (rc == SDNMPI_CTRL_REFUSED)
        drop_conn(c); /* e.g. a restarted controller that has not rediscovered the hosts yet */
    if (rc != SDNMPI_CTRL_OK)
        return rc;
    if (reply.job <= 0 || reply.token[0] == '\0') {
        snprintf(why, whylen, "register reply without a valid job id and token");
        kill_conn(c);
        return SDNMPI_CTRL_FAILED;
    }
    job->id = reply.job;
    memcpy(job->token, reply.token, sizeof job->token);
    if (reply.server[0] != '\0')
        snprintf(c->server, sizeof c->server, "%s", reply.server);
    if (locality != NULL && reply.n_locality != nhosts)
        locality[0] = SDNMPI_NO_LOCALITY; /* a controller before issue 17: no locality */
    memset(reply.token, 0, sizeof reply.token);
    c->holds_job = 1; /* failures go on counting until a request on the job gets a reply */
    return SDNMPI_CTRL_OK;
}

int sdnmpi_conn_locate(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                       const struct sdnmpi_job_ref *job,
                       const uint32_t *hosts, size_t nhosts, int64_t *locality, char *why,
                       size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    struct sdnmpi_rpc_reply reply = {.locality = locality, .locality_cap = nhosts};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_locate(&buf, id, job, hosts, nhosts))
        return encode_failed(&buf, why, whylen);
    int rc = exchange(c, cfg, &buf, id, &reply, 1, why, whylen);
    if (rc == SDNMPI_CTRL_OK && reply.n_locality != nhosts) {
        snprintf(why, whylen, "locate reply with %zu entries for %zu hosts", reply.n_locality,
                 nhosts);
        return SDNMPI_CTRL_REFUSED;
    }
    return rc;
}

int sdnmpi_conn_plan(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                     const struct sdnmpi_job_ref *job,
                     int64_t comm_id, const struct sdnmpi_host_steps *steps,
                     struct sdnmpi_rpc_reply *reply, char *why, size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_plan_allreduce(&buf, id, job, comm_id, cfg->planner, steps))
        return encode_failed(&buf, why, whylen);
    return exchange(c, cfg, &buf, id, reply, 1, why, whylen);
}

int sdnmpi_conn_plan_send(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                          const struct sdnmpi_job_ref *job, int64_t comm_id,
                          const struct sdnmpi_host_steps *steps, int64_t *req_id, char *why,
                          size_t whylen)
{
    if (c->nahead == SDNMPI_CONN_AHEAD_MAX) {
        snprintf(why, whylen, "%d requests are already ahead", SDNMPI_CONN_AHEAD_MAX);
        return SDNMPI_CTRL_REFUSED;
    }
    if (c->fd < 0) {
        snprintf(why, whylen, "not connected");
        return SDNMPI_CTRL_FAILED;
    }
    struct sdnmpi_rpc_buf buf = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_plan_allreduce(&buf, id, job, comm_id, cfg->planner, steps))
        return encode_failed(&buf, why, whylen);
    int64_t deadline = sdnmpi_now_ms() + cfg->timeout_ms;
    errno = 0;
    int rc = sdnmpi_rpc_send(c->fd, &buf, deadline, why, whylen);
    int err = errno;
    sdnmpi_rpc_buf_free(&buf);
    c->exchanges++; /* counted where it is sent: the collect makes no round trip of its own */
    if (rc != 0) {
        if (restart_symptom(err, deadline))
            sdnmpi_conn_close(c); /* as sdnmpi_conn_alive would have found it */
        else
            kill_conn(c);
        return SDNMPI_CTRL_FAILED;
    }
    struct sdnmpi_conn_ahead *a = &c->ahead[c->nahead++];
    memset(a, 0, sizeof *a);
    a->id = id;
    a->timeout_ms = cfg->timeout_ms;
    *req_id = id;
    return SDNMPI_CTRL_OK;
}

int sdnmpi_conn_plan_collect(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                             int64_t req_id, struct sdnmpi_rpc_reply *reply, char *why,
                             size_t whylen)
{
    int i = ahead_find(c, req_id);
    if (i >= 0 && !c->ahead[i].abandoned)
        i = ahead_read_upto(c, req_id, cfg->timeout_ms, 0);
    else
        i = -1;
    if (i < 0) {
        snprintf(why, whylen, "no request %" PRId64 " was sent ahead", req_id);
        return SDNMPI_CTRL_FAILED;
    }
    struct sdnmpi_conn_ahead *a = &c->ahead[i];
    int rc = a->rc;
    *reply = a->reply;
    reply->locality = NULL;
    reply->locality_cap = 0;
    if (rc != SDNMPI_CTRL_OK)
        snprintf(why, whylen, "%s", a->why);
    ahead_remove(c, i);
    return rc;
}

void sdnmpi_conn_plan_abandon(struct sdnmpi_conn *c, int64_t req_id)
{
    int i = ahead_find(c, req_id);
    if (i >= 0 && c->ahead[i].read)
        ahead_remove(c, i);
    else if (i >= 0)
        c->ahead[i].abandoned = 1;
}

int sdnmpi_conn_plan_bcast(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                           const struct sdnmpi_job_ref *job,
                           int64_t comm_id, uint32_t root, const uint32_t *members,
                           size_t nmembers, struct sdnmpi_rpc_reply *reply, char *why,
                           size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_plan_bcast(&buf, id, job, comm_id, root, members, nmembers,
                                     cfg->bcast_trees))
        return encode_failed(&buf, why, whylen);
    return exchange(c, cfg, &buf, id, reply, 1, why, whylen);
}

int sdnmpi_conn_release(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                        const struct sdnmpi_job_ref *job,
                        char *why, size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    struct sdnmpi_rpc_reply reply = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_release(&buf, id, job))
        return encode_failed(&buf, why, whylen);
    return exchange(c, cfg, &buf, id, &reply, 1, why, whylen);
}

int sdnmpi_conn_traffic(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                        const struct sdnmpi_job_ref *job, int phase,
                        const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                        struct sdnmpi_rpc_reply *reply, char *why, size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_traffic(&buf, id, job, phase, pairs, npairs, add, cfg->traffic_planner))
        return encode_failed(&buf, why, whylen);
    return exchange(c, cfg, &buf, id, reply, 1, why, whylen);
}

int sdnmpi_conn_phase(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                      const struct sdnmpi_job_ref *job, int64_t rank, int phase,
                      struct sdnmpi_rpc_reply *reply, char *why, size_t whylen)
{
    struct sdnmpi_rpc_buf buf = {0};
    int64_t id = c->next_id++;
    if (sdnmpi_rpc_encode_phase(&buf, id, job, rank, phase))
        return encode_failed(&buf, why, whylen);
    return exchange(c, cfg, &buf, id, reply, 1, why, whylen);
}
