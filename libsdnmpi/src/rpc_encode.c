/* rpc_encode.c -- docs/rpc.md's requests in C: a frame buffer (length header + msgpack body) and
 * one encoder per op. */
#include "rpc.h"

#include <arpa/inet.h>
#include <msgpack.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

static int buf_write(void *data, const char *src, size_t n)
{
    struct sdnmpi_rpc_buf *b = data;
    const size_t limit = SDNMPI_RPC_HEADER_BYTES + SDNMPI_RPC_MAX_FRAME;
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
    static const char zero[SDNMPI_RPC_HEADER_BYTES] = {0};
    buf->len = 0;
    buf->overflow = 0;
    if (buf_write(buf, zero, SDNMPI_RPC_HEADER_BYTES))
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
    size_t body = buf->len - SDNMPI_RPC_HEADER_BYTES;
    if (body == 0 || body > SDNMPI_RPC_MAX_FRAME) {
        buf->overflow = 1;
        return -1;
    }
    uint32_t n = htonl((uint32_t)body);
    memcpy(buf->data, &n, SDNMPI_RPC_HEADER_BYTES);
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
