/* rpc_decode.c -- docs/rpc.md's replies in C: one msgpack reply body into struct sdnmpi_rpc_reply. */
#include "rpc.h"

#include <msgpack.h>
#include <string.h>

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

/* A string into dst (cut to cap - 1 bytes, always terminated). 0, or -1 if o is not a string. */
static int get_str(const msgpack_object *o, char *dst, size_t cap)
{
    if (o->type != MSGPACK_OBJECT_STR)
        return -1;
    size_t n = o->via.str.size < cap - 1 ? o->via.str.size : cap - 1;
    memcpy(dst, o->via.str.ptr, n);
    dst[n] = '\0';
    return 0;
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
                char scratch[sizeof out->tree_group[0]];
                if (get_str(v, j < SDNMPI_RPC_MAX_TREES ? out->tree_group[j] : scratch,
                            sizeof scratch))
                    return -1;
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
            if (get_str(v, out->error, sizeof out->error))
                return -1;
        } else if (key_is(k, "server")) {
            if (get_str(v, out->server, sizeof out->server))
                return -1;
        } else if (key_is(k, "timings")) {
            if (decode_timings(v, out))
                return -1;
        } else if (key_is(k, "job")) {
            if (get_int(v, &out->job))
                return -1;
        } else if (key_is(k, "token")) {
            if (get_str(v, out->token, sizeof out->token) || v->via.str.size > SDNMPI_RPC_MAX_TOKEN)
                return -1;
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
            if (get_str(v, out->group, sizeof out->group))
                return -1;
        } else if (key_is(k, "port")) {
            if (get_int(v, &out->port))
                return -1;
        } else if (key_is(k, "switches")) {
            if (get_int(v, &out->switches))
                return -1;
        } else if (key_is(k, "top")) {
            if (get_str(v, out->top, sizeof out->top))
                return -1;
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
