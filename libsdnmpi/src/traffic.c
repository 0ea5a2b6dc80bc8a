/* traffic.c -- see traffic.h; the API functions SDN_MPI_Flow_hint(s) and SDN_MPI_Phase. */
#include "traffic.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "log.h"
#include "phase.h"
#include "sdnmpi.h"
#include "state.h"
#include "trace_read.h"

/* One line for the first no-op of this process (always), the later ones only when verbose. */
static void noop_line(const char *what, const char *why)
{
    static int said;
    if (!said) {
        said = 1;
        sdnmpi_warn("%s not sent: %s (further ones are not reported unless SDN_MPI_VERBOSE=1)", what, why);
    } else {
        sdnmpi_log("%s not sent: %s", what, why);
    }
}

size_t sdnmpi_traffic_heavy(struct sdnmpi_traffic_pair *pairs, size_t npairs, int min_share)
{
    int64_t top = 0;
    for (size_t i = 0; i < npairs; i++)
        if (pairs[i].bytes > top)
            top = pairs[i].bytes;
    if (min_share <= 0)
        return npairs;
    /* bytes >= top * share / 100, without overflow (bytes and top are at most INT64_MAX) */
    const long double least = (long double)top * (long double)min_share / 100.0L;
    size_t kept = 0;
    for (size_t i = 0; i < npairs; i++)
        if ((long double)pairs[i].bytes >= least)
            pairs[kept++] = pairs[i];
    return kept;
}

int sdnmpi_traffic_send_pairs(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                              const struct sdnmpi_job_ref *job, int phase,
                              const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                              struct sdnmpi_rpc_reply *total, size_t *requests, char *why,
                              size_t whylen)
{
    int64_t flows = 0;
    *requests = 0;
    for (size_t at = 0; at < npairs; at += SDNMPI_TRAFFIC_CHUNK_PAIRS) {
        size_t n = npairs - at < SDNMPI_TRAFFIC_CHUNK_PAIRS ? npairs - at : SDNMPI_TRAFFIC_CHUNK_PAIRS;
        int rc = sdnmpi_conn_traffic(c, cfg, job, phase, pairs + at, n, at > 0 ? 1 : add, total,
                                     why, whylen);
        if (rc != SDNMPI_CTRL_OK)
            return rc;
        (*requests)++;
        flows += total->flows > 0 ? total->flows : 0;
    }
    total->flows = flows;
    return SDNMPI_CTRL_OK;
}

void sdnmpi_traffic_send_trace(const uint32_t *hosts, int n)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    const char *path = s->cfg.traffic;
    if (path[0] == '\0')
        return;
    struct sdnmpi_trace_demand d;
    char why[512] = "";
    if (sdnmpi_trace_read(path, hosts, n, s->cfg.traffic_max_bytes, &d, why, sizeof why)) {
        sdnmpi_warn("SDN_MPI_TRAFFIC: %s; the job runs on default routes", why);
        return;
    }
    int sent = 0, empty = 0;
    int64_t flows = 0;
    for (int i = 0; i < d.nphases; i++) {
        struct sdnmpi_trace_phase *ph = &d.phase[i];
        size_t all = ph->npairs;
        ph->npairs = sdnmpi_traffic_heavy(ph->pairs, ph->npairs, s->cfg.traffic_min_share);
        if (ph->npairs == 0) {
            empty++;
            continue;
        }
        struct sdnmpi_rpc_reply reply = {0};
        size_t requests = 0;
        if (pthread_mutex_lock(&s->lock) != 0) {
            snprintf(why, sizeof why, "cannot lock the library state");
            break;
        }
        int rc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
        if (rc == SDNMPI_CTRL_OK)
            rc = sdnmpi_traffic_send_pairs(&s->conn, &s->cfg, &s->job, ph->phase, ph->pairs,
                                           ph->npairs, 0, &reply, &requests, why, sizeof why);
        (void)pthread_mutex_unlock(&s->lock);
        if (rc != SDNMPI_CTRL_OK) {
            sdnmpi_warn("SDN_MPI_TRAFFIC: phase %d (%zu host pairs) not accepted%s: %s; %d of %d "
                        "phases sent, the rest runs on default routes", ph->phase, ph->npairs,
                        requests ? " in full (its first parts were)" : "", why, sent,
                        d.nphases - empty);
            sdnmpi_trace_demand_free(&d);
            return;
        }
        sent++;
        flows += reply.flows;
        sdnmpi_log("traffic phase=%d pairs=%zu (of %zu) requests=%zu: flows=%" PRId64
                   " node_load=%" PRId64 " max_load=%" PRId64 " stored=%d", ph->phase, ph->npairs,
                   all, requests, reply.flows, reply.node_load, reply.plan_max_load, reply.stored);
    }
    sdnmpi_log("SDN_MPI_TRAFFIC %s: %d phases sent (%d without heavy traffic between hosts), %" PRId64
               " flow entries installed now", path, sent, empty, flows);
    sdnmpi_trace_demand_free(&d);
}

/* ---- phases ------------------------------------------------------------------------------ */

static void on_phase(int from, int to, void *arg)
{
    (void)from, (void)arg;
    struct sdnmpi_state *s = &sdnmpi_g;
    const char *off = sdnmpi_state_unavailable();
    char why[256] = "";
    if (off != NULL) {
        noop_line("phase", off);
        return;
    }
    struct sdnmpi_rpc_reply reply = {0};
    if (pthread_mutex_lock(&s->lock) != 0) {
        noop_line("phase", "cannot lock the library state");
        return;
    }
    int rc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_conn_phase(&s->conn, &s->cfg, &s->job, s->world_rank, to, &reply, why, sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    if (rc == SDNMPI_CTRL_REFUSED)
        sdnmpi_warn("phase %d: %s", to, why);
    else if (rc != SDNMPI_CTRL_OK)
        noop_line("phase", why);
    else
        sdnmpi_log("phase %d -> %d: installed=%d flows=%" PRId64, from, to, reply.installed, reply.flows);
}

int sdnmpi_traffic_hook_add(void)
{
    return sdnmpi_phase_add_hook(on_phase, NULL);
}

void sdnmpi_traffic_hook_remove(void)
{
    (void)sdnmpi_phase_remove_hook(on_phase, NULL); /* -1: it was not registered */
}

SDNMPI_EXPORT int SDN_MPI_Phase(int k)
{
    if (sdnmpi_phase_set(k) != 0) {
        sdnmpi_warn("SDN_MPI_Phase(%d) ignored: phases are 0..%d", k, SDNMPI_PHASE_MAX);
        return MPI_ERR_ARG;
    }
    return MPI_SUCCESS;
}

/* ---- hints ------------------------------------------------------------------------------- */

/* World ranks of peers[n] (ranks of comm's group, or remote group). MPI error code. */
static int world_ranks(MPI_Comm comm, int n, const int *peers, int *world)
{
    MPI_Group group = MPI_GROUP_NULL, wgroup = MPI_GROUP_NULL;
    int inter = 0, size = 0, rc;
    if ((rc = PMPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return rc;
    rc = inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Group_size(group, &size)) == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            if (peers[i] < 0 || peers[i] >= size)
                rc = MPI_ERR_RANK;
    }
    if (rc == MPI_SUCCESS && (rc = PMPI_Comm_group(MPI_COMM_WORLD, &wgroup)) == MPI_SUCCESS)
        rc = PMPI_Group_translate_ranks(group, n, peers, wgroup, world);
    if (wgroup != MPI_GROUP_NULL)
        (void)PMPI_Group_free(&wgroup);
    (void)PMPI_Group_free(&group);
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        if (world[i] == MPI_UNDEFINED || world[i] < 0 || world[i] >= sdnmpi_g.world_size)
            rc = MPI_ERR_RANK;
    return rc;
}

/* Hints -> host pairs from this rank's host, one per destination host, bytes summed (saturating).
 * Returns the number of pairs. */
static size_t fold_hints(int n, const int *world, const long long *bytes,
                         struct sdnmpi_traffic_pair *pairs)
{
    const struct sdnmpi_state *s = &sdnmpi_g;
    size_t np = 0;
    for (int i = 0; i < n; i++) {
        uint32_t dst = s->world_ips[world[i]];
        if (dst == s->fabric_ip)
            continue;
        size_t j = 0;
        while (j < np && pairs[j].dst != dst)
            j++;
        if (j == np) {
            pairs[np].src = s->fabric_ip;
            pairs[np].dst = dst;
            pairs[np].bytes = 0;
            np++;
        }
        pairs[j].bytes = pairs[j].bytes > INT64_MAX - bytes[i] ? INT64_MAX : pairs[j].bytes + bytes[i];
    }
    return np;
}

SDNMPI_EXPORT int SDN_MPI_Flow_hints(MPI_Comm comm, int n, const int *peers, const long long *bytes)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    if (n < 0 || (n > 0 && (peers == NULL || bytes == NULL)))
        return MPI_ERR_ARG;
    if (comm == MPI_COMM_NULL)
        return MPI_ERR_COMM;
    for (int i = 0; i < n; i++)
        if (bytes[i] < 1)
            return MPI_ERR_ARG;
    const char *off = sdnmpi_state_unavailable();
    if (off != NULL) {
        noop_line("flow hint", off);
        return MPI_SUCCESS;
    }
    if (n == 0)
        return MPI_SUCCESS;
    int *world = malloc((size_t)n * sizeof *world);
    struct sdnmpi_traffic_pair *pairs = malloc((size_t)n * sizeof *pairs);
    int rc = MPI_ERR_NO_MEM;
    if (world == NULL || pairs == NULL)
        goto out;
    if ((rc = world_ranks(comm, n, peers, world)) != MPI_SUCCESS)
        goto out;
    size_t np = fold_hints(n, world, bytes, pairs);
    int phase = sdnmpi_phase_current();
    if (np == 0) {
        sdnmpi_log("flow hint phase=%d: every peer is on this host, nothing to send", phase);
        goto out;
    }
    char why[256] = "";
    struct sdnmpi_rpc_reply reply = {0};
    if (pthread_mutex_lock(&s->lock) != 0) {
        rc = MPI_ERR_OTHER;
        goto out;
    }
    int crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
    if (crc == SDNMPI_CTRL_OK)
        crc = sdnmpi_conn_traffic(&s->conn, &s->cfg, &s->job, phase, pairs, np, 1, &reply, why,
                                  sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    if (crc == SDNMPI_CTRL_REFUSED) {
        sdnmpi_warn("flow hint phase=%d (%zu host pairs) refused: %s", phase, np, why);
        rc = MPI_ERR_OTHER;
    } else if (crc != SDNMPI_CTRL_OK) {
        noop_line("flow hint", why);
    } else {
        sdnmpi_log("flow hint phase=%d pairs=%zu: flows=%" PRId64 " stored=%d", phase, np,
                   reply.flows, reply.stored);
    }
out:
    free(world);
    free(pairs);
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Flow_hint(MPI_Comm comm, int peer, long long bytes)
{
    return SDN_MPI_Flow_hints(comm, 1, &peer, &bytes);
}
