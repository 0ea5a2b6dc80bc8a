/* trace_read.c -- see trace_read.h. Each rank file is read twice with json_lite: first its
 * n_procs, rank and the number of phases (the keys may come in any order; PFProf's are sorted, so
 * "phases" comes before "rank"), then the tx rows, folded at once into per-phase host-pair maps. */
#include "trace_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_lite.h"
#include "trace_files.h"

#define KEY_MAX 32

/* Host pairs of one phase: open addressing, key = src * H + dst + 1 (0 = empty). */
struct pairmap {
    uint64_t *keys, *bytes;
    size_t cap, used;
};

struct reader {
    int n;                 /* ranks of the job */
    const uint32_t *ip;    /* [n] */
    int *host;             /* [n] host index of each rank (ranks' order of first appearance) */
    uint32_t *host_ip;     /* [H] */
    int nhosts;
    unsigned char *seen;   /* [n] rank file read */
    int nphases;           /* len(phases[]) of the first file (0: none); -1 before it */
    uint64_t *row_b, *row_m; /* [n] the rows being read */
    struct pairmap map[SDNMPI_RPC_MAX_PHASE + 1];
};

static int map_add(struct pairmap *m, uint64_t key, uint64_t bytes)
{
    if (m->used * 2 >= m->cap) {
        if (m->used >= SDNMPI_RPC_MAX_TRAFFIC_PAIRS)
            return -2;
        size_t ncap = m->cap ? m->cap * 2 : 64;
        uint64_t *nk = calloc(ncap, sizeof *nk), *nb = calloc(ncap, sizeof *nb);
        if (nk == NULL || nb == NULL) {
            free(nk);
            free(nb);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] == 0)
                continue;
            size_t j = (size_t)(m->keys[i] * 0x9E3779B97F4A7C15ull) & (ncap - 1);
            while (nk[j] != 0)
                j = (j + 1) & (ncap - 1);
            nk[j] = m->keys[i];
            nb[j] = m->bytes[i];
        }
        free(m->keys);
        free(m->bytes);
        m->keys = nk;
        m->bytes = nb;
        m->cap = ncap;
    }
    key += 1;
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->keys[j] != 0 && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (m->keys[j] == 0) {
        if (m->used >= SDNMPI_RPC_MAX_TRAFFIC_PAIRS)
            return -2;
        m->keys[j] = key;
        m->used++;
    }
    m->bytes[j] = m->bytes[j] > UINT64_MAX - bytes ? UINT64_MAX : m->bytes[j] + bytes;
    return 0;
}

/* Rank r's rows (row_b, row_m) of phase k into k's host pairs. */
static int fold(struct reader *rd, int r, int k, char *why, size_t whylen)
{
    int hi = rd->host[r];
    for (int j = 0; j < rd->n; j++) {
        int hj = rd->host[j];
        if (rd->row_m[j] == 0 || rd->row_b[j] == 0 || hj == hi)
            continue;
        int rc = map_add(&rd->map[k], (uint64_t)hi * (uint64_t)rd->nhosts + (uint64_t)hj, rd->row_b[j]);
        if (rc == -2) {
            snprintf(why, whylen, "phase %d has more than %d host pairs", k,
                     SDNMPI_RPC_MAX_TRAFFIC_PAIRS);
            return -1;
        }
        if (rc) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int bad(const char *name, const struct json_lite *j, const char *what, char *why,
               size_t whylen)
{
    snprintf(why, whylen, "%s: %s", name, j->err ? j->err : what);
    return -1;
}

/* An array of exactly n non-negative integers into row. */
static int read_row(struct reader *rd, struct json_lite *j, uint64_t *row)
{
    int i = 0, rc;
    if (json_lite_array(j))
        return -1;
    while ((rc = json_lite_more(j)) == 1) {
        if (i >= rd->n || json_lite_u64(j, &row[i]))
            return -1;
        i++;
    }
    return rc == 0 && i == rd->n ? 0 : -1;
}

/* Pass 1: n_procs, rank, len(phases). */
static int scan(const char *name, const char *data, size_t len, uint64_t *n_procs, uint64_t *rank,
                int *nphases, char *why, size_t whylen)
{
    struct json_lite j;
    char key[KEY_MAX];
    int rc, have_n = 0, have_rank = 0;
    json_lite_init(&j, data, len);
    *nphases = 0;
    if (json_lite_object(&j))
        return bad(name, &j, "", why, whylen);
    while ((rc = json_lite_key(&j, key, sizeof key)) == 1) {
        if (!strcmp(key, "n_procs")) {
            rc = json_lite_u64(&j, n_procs);
            have_n = 1;
        } else if (!strcmp(key, "rank")) {
            rc = json_lite_u64(&j, rank);
            have_rank = 1;
        } else if (!strcmp(key, "phases")) {
            if ((rc = json_lite_array(&j)) == 0) {
                while ((rc = json_lite_more(&j)) == 1 && (rc = json_lite_skip(&j)) == 0)
                    if (++*nphases > SDNMPI_RPC_MAX_PHASE + 1) {
                        snprintf(why, whylen, "%s: more than %d phases", name, SDNMPI_RPC_MAX_PHASE);
                        return -1;
                    }
            }
        } else {
            rc = json_lite_skip(&j);
        }
        if (rc)
            return bad(name, &j, "", why, whylen);
    }
    if (rc || json_lite_end(&j))
        return bad(name, &j, "", why, whylen);
    if (!have_n || !have_rank)
        return bad(name, &j, have_n ? "no \"rank\"" : "no \"n_procs\"", why, whylen);
    return 0;
}

/* Pass 2 on a phases[k] object: its rows, folded into phase k. */
static int read_phase(struct reader *rd, struct json_lite *j, const char *name, int r, int k,
                      char *why, size_t whylen)
{
    char key[KEY_MAX];
    int rc, have = 0;
    uint64_t number;
    if (json_lite_object(j))
        return bad(name, j, "", why, whylen);
    while ((rc = json_lite_key(j, key, sizeof key)) == 1) {
        if (!strcmp(key, "tx_bytes") || !strcmp(key, "tx_messages")) {
            if (read_row(rd, j, key[3] == 'b' ? rd->row_b : rd->row_m)) {
                snprintf(why, whylen, "%s: phase %d: \"%s\" must be a list of %d non-negative integers",
                         name, k, key, rd->n);
                return -1;
            }
            have |= key[3] == 'b' ? 1 : 2;
        } else if (!strcmp(key, "phase")) {
            if (json_lite_u64(j, &number))
                return bad(name, j, "", why, whylen);
            if (number != (uint64_t)k) {
                snprintf(why, whylen, "%s: phases[%d] says it is phase %llu", name, k,
                         (unsigned long long)number);
                return -1;
            }
        } else if (json_lite_skip(j)) {
            return bad(name, j, "", why, whylen);
        }
    }
    if (rc)
        return bad(name, j, "", why, whylen);
    if (have != 3) {
        snprintf(why, whylen, "%s: phase %d has no \"%s\"", name, k, have & 1 ? "tx_messages" : "tx_bytes");
        return -1;
    }
    return fold(rd, r, k, why, whylen);
}

/* Pass 2: the rows (top level: phase 0 when there are no phases; else phases[1..]). */
static int read_rows(struct reader *rd, const char *name, int r, const char *data, size_t len,
                     char *why, size_t whylen)
{
    struct json_lite j;
    char key[KEY_MAX];
    int rc, have = 0, with_phases = rd->nphases > 1;
    json_lite_init(&j, data, len);
    if (json_lite_object(&j))
        return bad(name, &j, "", why, whylen);
    while ((rc = json_lite_key(&j, key, sizeof key)) == 1) {
        if (!with_phases && (!strcmp(key, "tx_bytes") || !strcmp(key, "tx_messages"))) {
            if (read_row(rd, &j, key[3] == 'b' ? rd->row_b : rd->row_m)) {
                snprintf(why, whylen, "%s: \"%s\" must be a list of %d non-negative integers", name,
                         key, rd->n);
                return -1;
            }
            have |= key[3] == 'b' ? 1 : 2;
        } else if (with_phases && !strcmp(key, "phases")) {
            if (json_lite_array(&j))
                return bad(name, &j, "", why, whylen);
            for (int k = 0; (rc = json_lite_more(&j)) == 1; k++) {
                if (k == 0 ? json_lite_skip(&j) != 0
                           : read_phase(rd, &j, name, r, k, why, whylen) != 0)
                    return k == 0 ? bad(name, &j, "", why, whylen) : -1;
            }
            if (rc)
                return bad(name, &j, "", why, whylen);
        } else if (json_lite_skip(&j)) {
            return bad(name, &j, "", why, whylen);
        }
    }
    if (rc)
        return bad(name, &j, "", why, whylen);
    if (!with_phases) {
        if (have != 3) {
            snprintf(why, whylen, "%s: no \"%s\"", name, have & 1 ? "tx_messages" : "tx_bytes");
            return -1;
        }
        return fold(rd, r, 0, why, whylen);
    }
    return 0;
}

static int on_file(void *arg, const char *name, long rank, const char *data, size_t len, char *why,
                   size_t whylen)
{
    struct reader *rd = arg;
    uint64_t n_procs = 0, file_rank = 0;
    int nphases;
    if (scan(name, data, len, &n_procs, &file_rank, &nphases, why, whylen))
        return -1;
    if (n_procs != (uint64_t)rd->n) {
        snprintf(why, whylen, "%s: the trace has %llu ranks, the job %d", name,
                 (unsigned long long)n_procs, rd->n);
        return -1;
    }
    if (file_rank != (uint64_t)rank || rank >= rd->n) {
        snprintf(why, whylen, "%s: holds rank %llu, its name says %ld", name,
                 (unsigned long long)file_rank, rank);
        return -1;
    }
    if (rd->seen[rank]) {
        snprintf(why, whylen, "%s: rank %ld appears twice", name, rank);
        return -1;
    }
    if (rd->nphases >= 0 && nphases != rd->nphases) {
        snprintf(why, whylen, "%s: %d phases, other ranks have %d", name, nphases, rd->nphases);
        return -1;
    }
    rd->nphases = nphases;
    rd->seen[rank] = 1;
    return read_rows(rd, name, (int)rank, data, len, why, whylen);
}

static int by_ip_rank(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* (ip << 32) | rank */
    return *x < *y ? -1 : *x > *y;
}

/* Host index of every rank, hosts numbered by first appearance in rank order (O(n log n)). */
static int index_hosts(struct reader *rd)
{
    uint64_t *key = malloc((size_t)rd->n * sizeof *key);
    int *first = malloc((size_t)rd->n * sizeof *first);
    if (key == NULL || first == NULL) {
        free(key);
        free(first);
        return -1;
    }
    for (int r = 0; r < rd->n; r++)
        key[r] = ((uint64_t)rd->ip[r] << 32) | (uint32_t)r;
    qsort(key, (size_t)rd->n, sizeof *key, by_ip_rank);
    for (int i = 0, lead = 0; i < rd->n; i++) { /* first[r] = the lowest rank on r's host */
        if (i > 0 && (key[i] >> 32) != (key[i - 1] >> 32))
            lead = (int)(uint32_t)key[i];
        else if (i == 0)
            lead = (int)(uint32_t)key[0];
        first[(uint32_t)key[i]] = lead;
    }
    for (int r = 0; r < rd->n; r++) {
        if (first[r] == r) {
            rd->host[r] = rd->nhosts;
            rd->host_ip[rd->nhosts++] = rd->ip[r];
        } else {
            rd->host[r] = rd->host[first[r]]; /* first[r] < r: already numbered */
        }
    }
    free(key);
    free(first);
    return 0;
}

static int by_bytes(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b; /* {bytes, key} */
    if (x[0] != y[0])
        return x[0] > y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Phase k's map as pairs, heaviest first. */
static int emit(struct reader *rd, int k, struct sdnmpi_trace_phase *out)
{
    const struct pairmap *m = &rd->map[k];
    out->phase = k;
    out->pairs = NULL;
    out->npairs = 0;
    if (m->used == 0)
        return 0;
    uint64_t *tmp = malloc(m->used * 2 * sizeof *tmp);
    out->pairs = malloc(m->used * sizeof *out->pairs);
    if (tmp == NULL || out->pairs == NULL) {
        free(tmp);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != 0) {
            tmp[2 * n] = m->bytes[i];
            tmp[2 * n + 1] = m->keys[i] - 1;
            n++;
        }
    qsort(tmp, n, 2 * sizeof *tmp, by_bytes);
    for (size_t i = 0; i < n; i++) {
        uint64_t key = tmp[2 * i + 1];
        out->pairs[i].src = rd->host_ip[key / (uint64_t)rd->nhosts];
        out->pairs[i].dst = rd->host_ip[key % (uint64_t)rd->nhosts];
        out->pairs[i].bytes = tmp[2 * i] > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)tmp[2 * i];
    }
    out->npairs = n;
    free(tmp);
    return 0;
}

void sdnmpi_trace_demand_free(struct sdnmpi_trace_demand *d)
{
    for (int k = 0; k < d->nphases; k++)
        free(d->phase[k].pairs);
    memset(d, 0, sizeof *d);
}

int sdnmpi_trace_read(const char *path, const uint32_t *rank_ip, int n, uint64_t max_bytes,
                      struct sdnmpi_trace_demand *out, char *why, size_t whylen)
{
    struct reader rd;
    memset(&rd, 0, sizeof rd);
    memset(out, 0, sizeof *out);
    rd.n = n;
    rd.ip = rank_ip;
    rd.nphases = -1;
    int rc = -1;
    if (n < 1) {
        snprintf(why, whylen, "no ranks");
        return -1;
    }
    rd.host = malloc((size_t)n * sizeof *rd.host);
    rd.host_ip = malloc((size_t)n * sizeof *rd.host_ip);
    rd.seen = calloc((size_t)n, 1);
    rd.row_b = malloc((size_t)n * sizeof *rd.row_b);
    rd.row_m = malloc((size_t)n * sizeof *rd.row_m);
    if (rd.host == NULL || rd.host_ip == NULL || rd.seen == NULL || rd.row_b == NULL
        || rd.row_m == NULL) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    if (index_hosts(&rd)) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    if (sdnmpi_trace_files(path, max_bytes, on_file, &rd, why, whylen))
        goto out;
    for (int r = 0; r < n; r++)
        if (!rd.seen[r]) {
            snprintf(why, whylen, "%s: rank file oxton-result%d.json missing", path, r);
            goto out;
        }
    int first = rd.nphases > 1 ? 1 : 0, last = rd.nphases > 1 ? rd.nphases - 1 : 0;
    for (int k = first; k <= last; k++) {
        if (emit(&rd, k, &out->phase[out->nphases])) {
            snprintf(why, whylen, "out of memory");
            sdnmpi_trace_demand_free(out);
            goto out;
        }
        out->nphases++;
    }
    rc = 0;
out:
    for (int k = 0; k <= SDNMPI_RPC_MAX_PHASE; k++) {
        free(rd.map[k].keys);
        free(rd.map[k].bytes);
    }
    free(rd.host);
    free(rd.host_ip);
    free(rd.seen);
    free(rd.row_b);
    free(rd.row_m);
    return rc;
}
