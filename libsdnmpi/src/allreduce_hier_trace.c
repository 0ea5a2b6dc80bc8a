/* allreduce_hier_trace.c -- see allreduce_hier_trace.h. */
#include "allreduce_hier_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define TRACE_MAX_ENTRIES (1 << 22) /* segments x steps traced per call at most */

struct entry {
    double post, done;
    int send_n, recv_n, to, from;
};

struct sdnmpi_hier_trace {
    const char *dir;
    int nseg, nsteps;
    double t0, cpu0;
    long nvcsw0, nivcsw0;
    struct entry *e;
};

static double now(clockid_t clk)
{
    struct timespec ts;
    if (clock_gettime(clk, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void switches(long *vol, long *invol)
{
    struct rusage ru;
    *vol = *invol = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        *vol = ru.ru_nvcsw;
        *invol = ru.ru_nivcsw;
    }
}

struct sdnmpi_hier_trace *sdnmpi_hier_trace_begin(const char *dir, int nseg, int nsteps)
{
    if (dir == NULL || dir[0] == '\0' || nseg < 1 || nsteps < 1
        || (long)nseg * nsteps > TRACE_MAX_ENTRIES)
        return NULL;
    struct sdnmpi_hier_trace *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->e = calloc((size_t)nseg * (size_t)nsteps, sizeof *t->e);
    if (t->e == NULL) {
        free(t);
        return NULL;
    }
    t->dir = dir;
    t->nseg = nseg;
    t->nsteps = nsteps;
    switches(&t->nvcsw0, &t->nivcsw0);
    t->cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
    t->t0 = now(CLOCK_MONOTONIC);
    return t;
}

void sdnmpi_hier_trace_post(struct sdnmpi_hier_trace *t, int seg, int step, int send_n, int recv_n,
                            int to, int from)
{
    if (t == NULL)
        return;
    struct entry *x = &t->e[(size_t)seg * (size_t)t->nsteps + (size_t)step];
    x->post = now(CLOCK_MONOTONIC);
    x->send_n = send_n;
    x->recv_n = recv_n;
    x->to = to;
    x->from = from;
}

void sdnmpi_hier_trace_done(struct sdnmpi_hier_trace *t, int seg, int step)
{
    if (t != NULL)
        t->e[(size_t)seg * (size_t)t->nsteps + (size_t)step].done = now(CLOCK_MONOTONIC);
}

void sdnmpi_hier_trace_end(struct sdnmpi_hier_trace *t, int rank, int p, int nleaves, int lanes,
                           int count, long extent, int depth)
{
    if (t == NULL)
        return;
    double t1 = now(CLOCK_MONOTONIC), cpu1 = now(CLOCK_PROCESS_CPUTIME_ID);
    long vol, invol;
    switches(&vol, &invol);
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/hier-%d-%ld.txt", t->dir, rank, (long)getpid());
    FILE *f = (n > 0 && (size_t)n < sizeof path) ? fopen(path, "a") : NULL;
    if (f == NULL) {
        sdnmpi_warn("SDN_MPI_HIER_TRACE: cannot append to %s/hier-%d-*.txt", t->dir, rank);
    } else {
        /* C rank p leaves lanes count extent nseg nsteps t0 t1 cpu_s vcsw ivcsw depth;
         * S seg step post_us done_us send_n recv_n to from (peers -1: none) */
        fprintf(f, "C %d %d %d %d %d %ld %d %d %.9f %.9f %.6f %ld %ld %d\n", rank, p, nleaves,
                lanes, count, extent, t->nseg, t->nsteps, t->t0, t1, cpu1 - t->cpu0,
                vol - t->nvcsw0, invol - t->nivcsw0, depth);
        for (int s = 0; s < t->nseg; s++)
            for (int i = 0; i < t->nsteps; i++) {
                const struct entry *x = &t->e[(size_t)s * (size_t)t->nsteps + (size_t)i];
                fprintf(f, "S %d %d %.1f %.1f %d %d %d %d\n", s, i, 1e6 * (x->post - t->t0),
                        1e6 * (x->done - t->t0), x->send_n, x->recv_n, x->to < 0 ? -1 : x->to,
                        x->from < 0 ? -1 : x->from);
            }
        if (fclose(f) != 0)
            sdnmpi_warn("SDN_MPI_HIER_TRACE: writing %s failed", path);
    }
    free(t->e);
    free(t);
}
