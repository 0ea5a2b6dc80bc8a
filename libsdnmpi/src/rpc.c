/* rpc.c -- docs/rpc.md in C: framing, request encoding, reply decoding, one request/reply
 * exchange. */
#include "rpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <msgpack.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"

#define HEADER_BYTES 4

/* ---- encoding ---------------------------------------------------------------------------- */

static int buf_write(void *data, const char *src, size_t n)
{
    struct sdnmpi_rpc_buf *b = data;
    const size_t limit = HEADER_BYTES + SDNMPI_RPC_MAX_FRAME;
    if (n > limit - b->len) {
        b->overflow = 1;
        return -1;
    }
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 256;
        while (ncap < b->len + n)
            ncap *= 2;
        if (ncap > limit)
            ncap = limit;
        char *nd = realloc(b->data, ncap);
        if (nd == NULL)
            return -1;
        b->data = nd;
        b->cap = ncap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

void sdnmpi_rpc_buf_free(struct sdnmpi_rpc_buf *buf)
{
    free(buf->data);
    memset(buf, 0, sizeof *buf);
}

static int pack_cstr(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    return (msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, s, n)) ? -1 : 0;
}

static int pack_ip(msgpack_packer *pk, uint32_t ip)
{
    char text[INET_ADDRSTRLEN];
    struct in_addr in = {.s_addr = ip};
    if (inet_ntop(AF_INET, &in, text, sizeof text) == NULL)
        return -1;
    return pack_cstr(pk, text);
}

/* Starts a request map of `nkeys` keys with v, id, op already in it (3 of the nkeys). */
static int begin(struct sdnmpi_rpc_buf *buf, msgpack_packer *pk, size_t nkeys, int64_t id,
                 const char *op)
{
    static const char zero[HEADER_BYTES] = {0};
    buf->len = 0;
    buf->overflow = 0;
    if (buf_write(buf, zero, HEADER_BYTES))
        return -1;
    msgpack_packer_init(pk, buf, buf_write);
    if (msgpack_pack_map(pk, nkeys) || pack_cstr(pk, "v") || msgpack_pack_int64(pk, SDNMPI_RPC_VERSION)
        || pack_cstr(pk, "id") || msgpack_pack_int64(pk, id) || pack_cstr(pk, "op")
        || pack_cstr(pk, op))
        return -1;
    return 0;
}

/* Fills in the length header. */
static int finish(struct sdnmpi_rpc_buf *buf)
{
    size_t body = buf->len - HEADER_BYTES;
    if (body == 0 || body > SDNMPI_RPC_MAX_FRAME) {
        buf->overflow = 1;
        return -1;
    }
    uint32_t n = htonl((uint32_t)body);
    memcpy(buf->data, &n, HEADER_BYTES);
    return 0;
}

int sdnmpi_rpc_encode_hello(struct sdnmpi_rpc_buf *buf, int64_t id)
{
    msgpack_packer pk;
    if (begin(buf, &pk, 3, id, "hello"))
        return -1;
    return finish(buf);
}

/* "hosts": [ip, ...] */
static int pack_hosts(msgpack_packer *pk, const uint32_t *hosts, size_t nhosts)
{
    if (nhosts < 1 || nhosts > SDNMPI_RPC_MAX_HOSTS || pack_cstr(pk, "hosts")
        || msgpack_pack_array(pk, nhosts))
        return -1;
    for (size_t i = 0; i < nhosts; i++)
        if (pack_ip(pk, hosts[i]))
            return -1;
    return 0;
}

int sdnmpi_rpc_encode_register(struct sdnmpi_rpc_buf *buf, int64_t id, const uint32_t *hosts,
                               size_t nhosts)
{
    msgpack_packer pk;
    if (begin(buf, &pk, 4, id, "register") || pack_hosts(&pk, hosts, nhosts))
        return -1;
    return finish(buf);
}

/* "job": id, "token": str (2 keys) */
static int pack_job(msgpack_packer *pk, const struct sdnmpi_job_ref *job)
{
    return (pack_cstr(pk, "job") || msgpack_pack_int64(pk, job->id) || pack_cstr(pk, "token")
            || pack_cstr(pk, job->token))
               ? -1
               : 0;
}

int sdnmpi_rpc_encode_locate(struct sdnmpi_rpc_buf *buf, int64_t id,
                             const struct sdnmpi_job_ref *job, const uint32_t *hosts, size_t nhosts)
{
    msgpack_packer pk;
    if (begin(buf, &pk, 6, id, "locate") || pack_job(&pk, job) || pack_hosts(&pk, hosts, nhosts))
        return -1;
    return finish(buf);
}

int sdnmpi_rpc_encode_plan_allreduce(struct sdnmpi_rpc_buf *buf, int64_t id,
                                     const struct sdnmpi_job_ref *job, int64_t comm,
                                     const char *planner,
                                     const struct sdnmpi_host_steps *steps)
{
    msgpack_packer pk;
    int with_planner = planner != NULL && planner[0] != '\0';
    if (steps->nsteps > SDNMPI_RPC_MAX_STEPS || steps->npairs > SDNMPI_RPC_MAX_PAIRS)
        return -1;
    if (begin(buf, &pk, 7 + (with_planner ? 1 : 0), id, "plan_allreduce") || pack_job(&pk, job)
        || pack_cstr(&pk, "comm") || msgpack_pack_int64(&pk, comm))
        return -1;
    if (with_planner && (pack_cstr(&pk, "planner") || pack_cstr(&pk, planner)))
        return -1;
    if (pack_cstr(&pk, "steps") || msgpack_pack_array(&pk, (size_t)steps->nsteps))
        return -1;
    for (int s = 0; s < steps->nsteps; s++) {
        size_t a = steps->start[s], b = steps->start[s + 1];
        if (msgpack_pack_array(&pk, b - a))
            return -1;
        for (size_t i = a; i < b; i++) {
            const struct sdnmpi_host_pair *hp = &steps->pairs[i];
            if (msgpack_pack_array(&pk, 3) || pack_ip(&pk, hp->src) || pack_ip(&pk, hp->dst)
                || msgpack_pack_int64(&pk, hp->count))
                return -1;
        }
    }
    return finish(buf);
}

int sdnmpi_rpc_encode_plan_bcast(struct sdnmpi_rpc_buf *buf, int64_t id,
                                 const struct sdnmpi_job_ref *job, int64_t comm, uint32_t root,
                                 const uint32_t *members, size_t nmembers, int trees)
{
    msgpack_packer pk;
    if (nmembers < 1 || nmembers > SDNMPI_RPC_MAX_HOSTS || trees < 1 || trees > SDNMPI_RPC_MAX_TREES)
        return -1;
    if (begin(buf, &pk, trees > 1 ? 9 : 8, id, "plan_bcast") || pack_job(&pk, job)
        || (trees > 1 && (pack_cstr(&pk, "trees") || msgpack_pack_int64(&pk, trees)))
        || pack_cstr(&pk, "comm")
        || msgpack_pack_int64(&pk, comm) || pack_cstr(&pk, "root") || pack_ip(&pk, root)
        || pack_cstr(&pk, "members") || msgpack_pack_array(&pk, nmembers))
        return -1;
    for (size_t i = 0; i < nmembers; i++)
        if (pack_ip(&pk, members[i]))
            return -1;
    return finish(buf);
}

int sdnmpi_rpc_encode_release(struct sdnmpi_rpc_buf *buf, int64_t id,
                              const struct sdnmpi_job_ref *job)
{
    msgpack_packer pk;
    if (begin(buf, &pk, 5, id, "release") || pack_job(&pk, job))
        return -1;
    return finish(buf);
}

int sdnmpi_rpc_encode_traffic(struct sdnmpi_rpc_buf *buf, int64_t id,
                              const struct sdnmpi_job_ref *job, int phase,
                              const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                              const char *planner)
{
    msgpack_packer pk;
    int with_planner = planner != NULL && planner[0] != '\0';
    if (phase < 0 || phase > SDNMPI_RPC_MAX_PHASE || npairs < 1
        || npairs > SDNMPI_RPC_MAX_TRAFFIC_PAIRS)
        return -1;
    for (size_t i = 0; i < npairs; i++)
        if (pairs[i].src == pairs[i].dst || pairs[i].bytes < 1)
            return -1;
    if (begin(buf, &pk, 8 + (with_planner ? 1 : 0), id, "traffic") || pack_job(&pk, job)
        || pack_cstr(&pk, "phase") || msgpack_pack_int64(&pk, phase) || pack_cstr(&pk, "add")
        || (add ? msgpack_pack_true(&pk) : msgpack_pack_false(&pk)))
        return -1;
    if (with_planner && (pack_cstr(&pk, "planner") || pack_cstr(&pk, planner)))
        return -1;
    if (pack_cstr(&pk, "pairs") || msgpack_pack_array(&pk, npairs))
        return -1;
    for (size_t i = 0; i < npairs; i++)
        if (msgpack_pack_array(&pk, 3) || pack_ip(&pk, pairs[i].src) || pack_ip(&pk, pairs[i].dst)
            || msgpack_pack_int64(&pk, pairs[i].bytes))
            return -1;
    return finish(buf);
}

int sdnmpi_rpc_encode_phase(struct sdnmpi_rpc_buf *buf, int64_t id,
                            const struct sdnmpi_job_ref *job, int64_t rank, int phase)
{
    msgpack_packer pk;
    if (rank < 0 || phase < 0 || phase > SDNMPI_RPC_MAX_PHASE)
        return -1;
    if (begin(buf, &pk, 7, id, "phase") || pack_job(&pk, job) || pack_cstr(&pk, "rank")
        || msgpack_pack_int64(&pk, rank) || pack_cstr(&pk, "phase")
        || msgpack_pack_int64(&pk, phase))
        return -1;
    return finish(buf);
}

/* ---- decoding ---------------------------------------------------------------------------- */

static int key_is(const msgpack_object *k, const char *name)
{
    size_t n = strlen(name);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && !memcmp(k->via.str.ptr, name, n);
}

static int get_int(const msgpack_object *o, int64_t *out)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
        if (o->via.u64 > (uint64_t)INT64_MAX)
            return -1;
        *out = (int64_t)o->via.u64;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *out = o->via.i64;
        return 0;
    }
    return -1;
}

static int get_number(const msgpack_object *o, double *out)
{
    int64_t i;
    if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32) {
        *out = o->via.f64;
        return 0;
    }
    if (get_int(o, &i) == 0) {
        *out = (double)i;
        return 0;
    }
    return -1;
}

static void copy_str(const msgpack_object *o, char *dst, size_t cap)
{
    size_t n = o->via.str.size < cap - 1 ? o->via.str.size : cap - 1;
    memcpy(dst, o->via.str.ptr, n);
    dst[n] = '\0';
}

static int decode_timings(const msgpack_object *o, struct sdnmpi_rpc_reply *out)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return -1;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key, *v = &o->via.map.ptr[i].val;
        double *slot = key_is(k, "total_s") ? &out->total_s
                       : key_is(k, "plan_s") ? &out->plan_s
                       : key_is(k, "install_s") ? &out->install_s
                                               : NULL;
        if (slot != NULL && get_number(v, slot))
            return -1;
    }
    return 0;
}

/* plan_bcast's `trees`: an array of maps with a string `group` and an int `port` each. */
static int decode_trees(const msgpack_object *o, struct sdnmpi_rpc_reply *out)
{
    if (o->type != MSGPACK_OBJECT_ARRAY)
        return -1;
    out->n_trees = o->via.array.size;
    for (uint32_t j = 0; j < o->via.array.size; j++) {
        const msgpack_object *t = &o->via.array.ptr[j];
        int have_group = 0, have_port = 0;
        if (t->type != MSGPACK_OBJECT_MAP)
            return -1;
        for (uint32_t i = 0; i < t->via.map.size; i++) {
            const msgpack_object *k = &t->via.map.ptr[i].key, *v = &t->via.map.ptr[i].val;
            int64_t port = 0;
            if (key_is(k, "group")) {
                if (v->type != MSGPACK_OBJECT_STR)
                    return -1;
                if (j < SDNMPI_RPC_MAX_TREES)
                    copy_str(v, out->tree_group[j], sizeof out->tree_group[j]);
                have_group = 1;
            } else if (key_is(k, "port")) {
                if (get_int(v, &port))
                    return -1;
                if (j < SDNMPI_RPC_MAX_TREES)
                    out->tree_port[j] = port;
                have_port = 1;
            }
        }
        if (!have_group || !have_port)
            return -1;
    }
    return 0;
}

static int decode_map(const msgpack_object *root, struct sdnmpi_rpc_reply *out)
{
    int have_v = 0, have_id = 0, have_status = 0;
    if (root->type != MSGPACK_OBJECT_MAP)
        return -1;
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object *k = &root->via.map.ptr[i].key, *v = &root->via.map.ptr[i].val;
        int64_t n;
        if (key_is(k, "v")) {
            if (get_int(v, &n) || n != SDNMPI_RPC_VERSION)
                return -1;
            have_v = 1;
        } else if (key_is(k, "id")) {
            if (get_int(v, &out->id))
                return -1;
            have_id = 1;
        } else if (key_is(k, "status")) {
            if (key_is(v, "ok"))
                out->ok = 1;
            else if (key_is(v, "error"))
                out->ok = 0;
            else
                return -1;
            have_status = 1;
        } else if (key_is(k, "error")) {
            if (v->type != MSGPACK_OBJECT_STR)
                return -1;
            copy_str(v, out->error, sizeof out->error);
        } else if (key_is(k, "server")) {
            if (v->type != MSGPACK_OBJECT_STR)
                return -1;
            copy_str(v, out->server, sizeof out->server);
        } else if (key_is(k, "timings")) {
            if (decode_timings(v, out))
                return -1;
        } else if (key_is(k, "job")) {
            if (get_int(v, &out->job))
                return -1;
        } else if (key_is(k, "token")) {
            if (v->type != MSGPACK_OBJECT_STR || v->via.str.size > SDNMPI_RPC_MAX_TOKEN)
                return -1;
            copy_str(v, out->token, sizeof out->token);
        } else if (key_is(k, "flows")) {
            if (get_int(v, &out->flows))
                return -1;
        } else if (key_is(k, "max_load") && v->type != MSGPACK_OBJECT_ARRAY) {
            if (get_int(v, &out->plan_max_load)) /* traffic: one int */
                return -1;
        } else if (key_is(k, "max_load")) {
            out->n_max_load = v->via.array.size;
            for (uint32_t j = 0; j < v->via.array.size && j < SDNMPI_RPC_MAX_LOADS; j++)
                if (get_int(&v->via.array.ptr[j], &out->max_load[j]))
                    return -1;
        } else if (key_is(k, "locality")) {
            if (v->type != MSGPACK_OBJECT_ARRAY)
                return -1;
            out->n_locality = v->via.array.size;
            for (uint32_t j = 0; j < v->via.array.size && j < out->locality_cap; j++)
                if (get_int(&v->via.array.ptr[j], &out->locality[j]))
                    return -1;
        } else if (key_is(k, "group")) {
            if (v->type != MSGPACK_OBJECT_STR)
                return -1;
            copy_str(v, out->group, sizeof out->group);
        } else if (key_is(k, "port")) {
            if (get_int(v, &out->port))
                return -1;
        } else if (key_is(k, "switches")) {
            if (get_int(v, &out->switches))
                return -1;
        } else if (key_is(k, "top")) {
            if (v->type != MSGPACK_OBJECT_STR)
                return -1;
            copy_str(v, out->top, sizeof out->top);
        } else if (key_is(k, "trees")) {
            if (decode_trees(v, out))
                return -1;
        } else if (key_is(k, "cached")) {
            if (v->type != MSGPACK_OBJECT_BOOLEAN)
                return -1;
            out->cached = v->via.boolean ? 1 : 0;
        } else if (key_is(k, "node_load")) {
            if (get_int(v, &out->node_load))
                return -1;
        } else if (key_is(k, "stored") || key_is(k, "installed")) {
            if (v->type != MSGPACK_OBJECT_BOOLEAN)
                return -1;
            *(key_is(k, "stored") ? &out->stored : &out->installed) = v->via.boolean ? 1 : 0;
        }
        /* other keys (lower_bound, future additions) are not needed here */
    }
    return (have_v && have_id && have_status) ? 0 : -1;
}

int sdnmpi_rpc_decode_reply(const char *body, size_t len, struct sdnmpi_rpc_reply *out)
{
    int64_t *locality = out->locality;
    size_t locality_cap = locality != NULL ? out->locality_cap : 0;
    memset(out, 0, sizeof *out);
    out->locality = locality;
    out->locality_cap = locality_cap;
    out->flows = -1;
    out->port = -1;
    out->switches = -1;
    out->node_load = out->plan_max_load = -1;
    out->stored = out->installed = -1;
    out->total_s = out->plan_s = out->install_s = -1.0;
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    int rc = -1;
    if (msgpack_unpack_next(&u, body, len, &off) == MSGPACK_UNPACK_SUCCESS && off == len)
        rc = decode_map(&u.data, out);
    msgpack_unpacked_destroy(&u);
    return rc;
}

/* ---- one exchange ------------------------------------------------------------------------ */

int sdnmpi_rpc_send(int fd, const struct sdnmpi_rpc_buf *req, int64_t deadline_ms, char *what,
                    size_t whatlen)
{
    if (sdnmpi_sock_write_all(fd, req->data, req->len, deadline_ms)) {
        snprintf(what, whatlen, "send failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int sdnmpi_rpc_recv(int fd, int64_t id, int64_t deadline_ms, struct sdnmpi_rpc_reply *reply,
                    char *what, size_t whatlen)
{
    unsigned char hdr[HEADER_BYTES];
    if (sdnmpi_sock_read_all(fd, hdr, sizeof hdr, deadline_ms)) {
        snprintf(what, whatlen, "no reply: %s",
                 errno == ECONNRESET ? "connection closed" : strerror(errno));
        return -1;
    }
    uint32_t n = ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) | ((uint32_t)hdr[2] << 8) | hdr[3];
    if (n == 0 || n > SDNMPI_RPC_MAX_FRAME) {
        snprintf(what, whatlen, "bad reply length %u", (unsigned)n);
        return -1;
    }
    char *body = malloc(n);
    if (body == NULL) {
        snprintf(what, whatlen, "out of memory for a %u-byte reply", (unsigned)n);
        return -1;
    }
    int rc = -1;
    if (sdnmpi_sock_read_all(fd, body, n, deadline_ms)) {
        snprintf(what, whatlen, "truncated reply: %s",
                 errno == ECONNRESET ? "connection closed" : strerror(errno));
    } else if (sdnmpi_rpc_decode_reply(body, n, reply)) {
        snprintf(what, whatlen, "malformed reply");
    } else if (reply->id != id) {
        snprintf(what, whatlen, "reply id %lld for request %lld%s%s", (long long)reply->id,
                 (long long)id, reply->error[0] ? ": " : "", reply->error);
    } else {
        rc = 0;
    }
    free(body);
    return rc;
}

int sdnmpi_rpc_call(int fd, const struct sdnmpi_rpc_buf *req, int64_t id, int64_t deadline_ms,
                    struct sdnmpi_rpc_reply *reply, char *what, size_t whatlen)
{
    if (sdnmpi_rpc_send(fd, req, deadline_ms, what, whatlen))
        return -1;
    return sdnmpi_rpc_recv(fd, id, deadline_ms, reply, what, whatlen);
}
