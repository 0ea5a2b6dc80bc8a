/* prof_finish.c -- see prof_finish.h. Everything here calls PMPI_* directly, after counting has
 * stopped, so none of it shows up in the trace. */
#include "prof_finish.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "prof.h"
#include "prof_out.h"

#define JOB_MAX 96
#define PATH_BYTES 4096
#define RANK_FILE "oxton-result%d.json"

/* What rank 0 needs to know that the file it sees is this job's file of that rank. */
struct file_id {
    uint64_t ok, size, crc;
};

static const char *out_dir(void)
{
    const char *d = getenv("SDN_MPI_PROF_DIR");
    return d != NULL && *d != '\0' ? d : ".";
}

/* [A-Za-z0-9._-] kept, anything else becomes '_'. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
            *s = '_';
}

/* SDN_MPI_PROF_JOB, or "<executable>-<UTC date-time>", decided by rank 0. */
static void job_name(char *job)
{
    if (prof_g.rank == 0) {
        const char *env = getenv("SDN_MPI_PROF_JOB");
        time_t now = time(NULL);
        struct tm tm;
        char stamp[32] = "0";
        if (gmtime_r(&now, &tm) != NULL && strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm) == 0)
            snprintf(stamp, sizeof stamp, "0");
        int n = env != NULL && *env != '\0' ? snprintf(job, JOB_MAX, "%s", env)
                                            : snprintf(job, JOB_MAX, "%s-%s", program_invocation_short_name, stamp);
        if (n < 0)
            snprintf(job, JOB_MAX, "job");
        sanitize(job);
        if (job[0] == '.') /* no hidden or relative names */
            job[0] = '_';
    }
    if (PMPI_Bcast(job, JOB_MAX, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        snprintf(job, JOB_MAX, "job");
}

static int by_size(const void *a, const void *b)
{
    const struct prof_size_freq *x = a, *y = b;
    return x->size < y->size ? -1 : x->size > y->size;
}

/* Sorts v[0..n) by size and merges equal sizes; the new length. */
static size_t merge_sizes(struct prof_size_freq *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, by_size);
    size_t m = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].size == v[m].size)
            v[m].freq += v[i].freq;
        else
            v[++m] = v[i];
    }
    return m + 1;
}

/* The histogram's entries, grouped by peer, as (size, freq) pairs: sendbuf, counts and displs in
 * uint64 units for an Alltoallv. Also the tx histogram (merged). 0 or -1. */
struct hist_x {
    uint64_t *send, *recv;
    int *scount, *sdispl, *rcount, *rdispl;
    struct prof_size_freq *tx, *rx;
    size_t n_tx, n_rx;
};

/* 1 if `ok` on every rank (collective). */
static int agree(int ok)
{
    int all = 0;
    return PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all;
}

static int exchange_sizes(struct hist_x *x)
{
    int n = prof_g.size;
    const struct prof_hist *h = &prof_g.hist;
    x->scount = calloc(4 * (size_t)n, sizeof *x->scount);
    x->send = malloc((2 * h->used + 1) * sizeof *x->send);
    x->tx = malloc((h->used + 1) * sizeof *x->tx);
    if (!agree(x->scount != NULL && x->send != NULL && x->tx != NULL))
        return -1;
    x->sdispl = x->scount + n;
    x->rcount = x->sdispl + n;
    x->rdispl = x->rcount + n;
    for (size_t i = 0; i < h->cap; i++)
        if (h->slots[i].peer >= 0)
            x->scount[h->slots[i].peer] += 2;
    for (int j = 1; j < n; j++)
        x->sdispl[j] = x->sdispl[j - 1] + x->scount[j - 1];
    int *fill = x->rcount; /* reused as a cursor, overwritten by the Alltoall below */
    memcpy(fill, x->sdispl, (size_t)n * sizeof *fill);
    for (size_t i = 0; i < h->cap; i++) {
        const struct prof_hist_entry *e = &h->slots[i];
        if (e->peer < 0)
            continue;
        x->send[fill[e->peer]++] = e->size;
        x->send[fill[e->peer]++] = e->freq;
        x->tx[x->n_tx].size = e->size;
        x->tx[x->n_tx++].freq = e->freq;
    }
    x->n_tx = merge_sizes(x->tx, x->n_tx);
    if (PMPI_Alltoall(x->scount, 1, MPI_INT, x->rcount, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    size_t total = 0;
    for (int j = 0; j < n; j++) {
        x->rdispl[j] = (int)total;
        total += (size_t)x->rcount[j];
    }
    x->recv = malloc((total + 1) * sizeof *x->recv);
    x->rx = malloc((total / 2 + 1) * sizeof *x->rx);
    if (!agree(x->recv != NULL && x->rx != NULL))
        return -1;
    if (PMPI_Alltoallv(x->send, x->scount, x->sdispl, MPI_UINT64_T, x->recv, x->rcount, x->rdispl, MPI_UINT64_T,
                       MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    for (size_t i = 0; i + 1 < total; i += 2) {
        x->rx[x->n_rx].size = x->recv[i];
        x->rx[x->n_rx++].freq = x->recv[i + 1];
    }
    x->n_rx = merge_sizes(x->rx, x->n_rx);
    return 0;
}

static void free_sizes(struct hist_x *x)
{
    free(x->send);
    free(x->recv);
    free(x->scount);
    free(x->tx);
    free(x->rx);
}

/* rx rows of phases 0..K from everybody's tx rows: one Alltoall of (bytes, msgs) per phase.
 * rows: [4][K+1][n] (tx_b, tx_m, rx_b, rx_m). 0 or -1. */
static int exchange_rows(uint64_t *rows, int K)
{
    int n = prof_g.size, per = 2 * (K + 1);
    uint64_t *send = malloc(2 * (size_t)n * (size_t)per * sizeof *send);
    if (!agree(send != NULL)) {
        free(send);
        return -1;
    }
    uint64_t *recv = send + (size_t)n * (size_t)per;
    size_t plane = (size_t)(K + 1) * (size_t)n;
    for (int k = 0; k <= K; k++) {
        const struct prof_phase *ph = &prof_g.phase[k];
        for (int j = 0; j < n; j++) {
            uint64_t b = ph->tx_bytes != NULL ? ph->tx_bytes[j] : 0, m = ph->tx_msgs != NULL ? ph->tx_msgs[j] : 0;
            rows[0 * plane + (size_t)k * n + j] = b;
            rows[1 * plane + (size_t)k * n + j] = m;
            send[(size_t)j * per + 2 * k] = b;
            send[(size_t)j * per + 2 * k + 1] = m;
        }
    }
    int rc = PMPI_Alltoall(send, per, MPI_UINT64_T, recv, per, MPI_UINT64_T, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) {
        for (int k = 0; k <= K; k++) {
            for (int j = 0; j < n; j++) {
                rows[2 * plane + (size_t)k * n + j] = recv[(size_t)j * per + 2 * k];
                rows[3 * plane + (size_t)k * n + j] = recv[(size_t)j * per + 2 * k + 1];
            }
        }
    }
    free(send);
    return rc == MPI_SUCCESS ? 0 : -1;
}

/* Size and CRC-32 of a file, for rank 0's check that it sees this job's file. */
static int file_id(const char *path, struct file_id *id)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    static unsigned char buf[65536];
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t got;
    uint64_t size = 0;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        crc = crc32(crc, buf, (uInt)got);
        size += got;
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return -1;
    id->size = size;
    id->crc = crc;
    return 0;
}

/* Rank 0: <job>.tar.gz if every rank's file is visible here and is the one that rank wrote. */
static void archive(const char *dir, const char *job, const struct file_id *ids)
{
    int n = prof_g.size;
    char (*names)[32] = malloc((size_t)n * sizeof *names);
    const char **list = malloc((size_t)n * sizeof *list);
    char path[PATH_BYTES];
    if (names == NULL || list == NULL) {
        prof_warn("out of memory: no %s.tar.gz", job);
        goto out;
    }
    for (int r = 0; r < n; r++) {
        struct file_id seen;
        snprintf(names[r], sizeof names[r], RANK_FILE, r);
        list[r] = names[r];
        int len = snprintf(path, sizeof path, "%s/%s", dir, names[r]);
        if (!ids[r].ok || len < 0 || (size_t)len >= sizeof path || file_id(path, &seen) != 0 ||
            seen.size != ids[r].size || seen.crc != ids[r].crc) {
            if (getenv("SDN_MPI_PROF_VERBOSE") != NULL)
                prof_warn("rank %d's file is not visible here: no %s.tar.gz (no shared file system?)", r, job);
            goto out;
        }
    }
    int len = snprintf(path, sizeof path, "%s/%s.tar.gz", dir, job);
    if (len < 0 || (size_t)len >= sizeof path || prof_tar_write(path, dir, list, n) != 0)
        prof_warn("cannot write %s/%s.tar.gz: %s", dir, job, strerror(errno));
    else if (getenv("SDN_MPI_PROF_VERBOSE") != NULL)
        prof_warn("wrote %s", path);
out:
    free(names);
    free(list);
}

void prof_finish(void)
{
    int n = prof_g.size, k_now = sdnmpi_phase_current();
    double duration = PMPI_Wtime() - prof_g.t_start;
    if (prof_g.source == PROF_SOURCE_MPIT && prof_mpit_close(k_now) != 0) {
        prof_warn("reading the MPI_T counters failed at the end; no trace will be written");
        prof_g.failed = 1;
    }
    prof_g.active = 0;
    int mine[2] = {sdnmpi_phase_highest(), prof_g.failed}, all[2] = {0, 1};
    if (PMPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS || all[1])
        return; /* a rank could not count (it said why): no partial trace */
    int K = all[0];
    size_t plane = (size_t)(K + 1) * (size_t)n;
    uint64_t *rows = malloc(4 * plane * sizeof *rows);
    struct prof_out_phase *phases = calloc((size_t)K + 1, sizeof *phases);
    struct file_id id = {0, 0, 0}, *ids = prof_g.rank == 0 ? malloc((size_t)n * sizeof *ids) : NULL;
    int have = rows != NULL && phases != NULL && (prof_g.rank != 0 || ids != NULL);
    for (int k = 1; k <= K && have; k++)
        have = prof_phase_get(k) != NULL;
    struct hist_x x;
    memset(&x, 0, sizeof x);
    char job[JOB_MAX] = "";
    const char *dir = out_dir();
    char path[PATH_BYTES], host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    if (!agree(have) || exchange_rows(rows, K) != 0 || exchange_sizes(&x) != 0) {
        if (prof_g.rank == 0)
            prof_warn("out of memory or an MPI error at the end: no trace written");
        goto out;
    }
    job_name(job);
    int hl = 0;
    if (PMPI_Get_processor_name(host, &hl) != MPI_SUCCESS)
        snprintf(host, sizeof host, "unknown");
    for (int k = 0; k <= K; k++) {
        phases[k].tx_bytes = rows + 0 * plane + (size_t)k * n;
        phases[k].tx_msgs = rows + 1 * plane + (size_t)k * n;
        phases[k].rx_bytes = rows + 2 * plane + (size_t)k * n;
        phases[k].rx_msgs = rows + 3 * plane + (size_t)k * n;
        phases[k].duration = k == 0 ? duration : sdnmpi_phase_seconds(k);
        phases[k].events = prof_g.phase[k].events;
    }
    struct prof_out out = {
        .rank = prof_g.rank, .n_procs = n, .processor_name = host,
        .source = prof_g.source == PROF_SOURCE_MPIT ? "mpi_t" : "pmpi", .duration = duration,
        .n_phases = K + 1, .phase = phases, .tx_sizes = x.tx, .rx_sizes = x.rx,
        .n_tx_sizes = x.n_tx, .n_rx_sizes = x.n_rx,
    };
    int len = snprintf(path, sizeof path, "%s/" RANK_FILE, dir, prof_g.rank);
    if (len < 0 || (size_t)len >= sizeof path || prof_json_write(path, &out) != 0)
        prof_warn("cannot write %s/" RANK_FILE ": %s", dir, prof_g.rank, strerror(errno));
    else if (file_id(path, &id) == 0)
        id.ok = 1;
    if (PMPI_Gather(&id, 3, MPI_UINT64_T, ids, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
        prof_g.rank == 0)
        archive(dir, job, ids);
out:
    free(ids);
    free(rows);
    free(phases);
    free_sizes(&x);
}
