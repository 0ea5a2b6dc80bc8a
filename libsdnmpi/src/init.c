/* init.c -- SDN_MPI_Init / SDN_MPI_Finalize: job registration and the library state. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "bcast_plan.h"
#include "commattr.h"
#include "controller.h"
#include "init_exchange.h"
#include "log.h"
#include "plan.h"
#include "plan_ahead.h"
#include "plan_comm.h"
#include "reconnect.h"
#include "sdnmpi.h"
#include "state.h"
#include "timing.h"
#include "traffic.h"

/* What world rank 0 decides for everyone at SDN_MPI_Init (broadcast as bytes: all ranks run the
 * same binary). */
struct agreement {
    int64_t ok;
    struct sdnmpi_job_ref job; /* every rank needs the token: any may lead a communicator's plan */
    int64_t disable;
    int64_t reason; /* index into reasons[] when !ok */
    uint64_t min_bytes, max_bytes, rab_min;
    int64_t min_bytes_set;
    int64_t reorder, plan_ahead, lib_comm;
    int64_t agree_steps; /* reconnect.h: off when the job may call from several threads at once */
    char planner[SDNMPI_PLANNER_MAX];
    uint64_t bcast_min_bytes;
    int64_t bcast_min_hosts, bcast_rate_mbps, bcast_rounds, bcast_idle_ms, bcast_datagram;
    int64_t bcast_trees;
    uint64_t alltoall_segment; /* every rank must cut a block into the same messages */
    int64_t alltoall_grid;     /* and run the same steps */
    uint64_t reduce_chain_min, reduce_segment; /* Reduce's algorithm and segments, alike */
    uint64_t allgather_cycles_min; /* Allgather's algorithm, alike */
};

static const char *const reasons[] = {
    "SDN path on", "SDN_MPI_DISABLE is set", "SDN_MPI_CONTROLLER is not set",
    "cannot reach the controller", "the controller refused the job", "out of memory",
};
enum { R_ON, R_DISABLED, R_NO_CONTROLLER, R_UNREACHABLE, R_REFUSED, R_NOMEM };

/* World rank 0: connect and register (one round trip: register's reply names the server and
 * where each host is, kept in world_leaf for the plans world rank 0 leads). Fills
 * a->ok/job/reason. */
static void register_job(const uint32_t *hosts, int n, struct agreement *a)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    char why[256] = "";
    double t0 = sdnmpi_clock(), ctrl = 0.0;
    int64_t x0 = s->conn.exchanges;
    int ok = sdnmpi_conn_connect(&s->conn, &s->cfg, why, sizeof why) == SDNMPI_CTRL_OK;
    s->world_leaf = malloc((size_t)n * sizeof *s->world_leaf); /* NULL: plans use locate */
    int rc = ok ? sdnmpi_conn_register(&s->conn, &s->cfg, hosts, (size_t)n, &a->job,
                                       s->world_leaf, why, sizeof why)
                : SDNMPI_CTRL_FAILED;
    if (ok && s->conn.ctrl_s > 0)
        ctrl += s->conn.ctrl_s;
    sdnmpi_timing_set(SDNMPI_T_INIT_RPC, sdnmpi_clock() - t0);
    sdnmpi_timing_set(SDNMPI_T_INIT_RTTS, (double)(s->conn.exchanges - x0));
    sdnmpi_timing_set(SDNMPI_T_INIT_CTRL, ctrl);
    if (!ok) {
        a->reason = R_UNREACHABLE;
        sdnmpi_log("init: %s, falling back to PMPI_Allreduce", why);
        return;
    }
    if (rc != SDNMPI_CTRL_OK) {
        a->reason = rc == SDNMPI_CTRL_REFUSED ? R_REFUSED : R_UNREACHABLE;
        sdnmpi_log("init: register failed (%s), falling back to PMPI_Allreduce", why);
        sdnmpi_conn_close(&s->conn);
        return;
    }
    a->ok = 1;
    a->reason = R_ON;
    sdnmpi_log("init: job %" PRId64 " registered with %d hosts at %s:%s (%s)", a->job.id, n,
               s->cfg.ctrl_host, s->cfg.ctrl_port, s->conn.server);
}

size_t sdnmpi_init_agreement_bytes(void)
{
    return sizeof(struct agreement);
}

SDNMPI_EXPORT int SDN_MPI_Init(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    int flag = 0, fin = 1, rc, rank, size;
    if (PMPI_Initialized(&flag) != MPI_SUCCESS || !flag || PMPI_Finalized(&fin) != MPI_SUCCESS
        || fin)
        return MPI_ERR_OTHER;
    if (s->initialized) {
        sdnmpi_log("SDN_MPI_Init called twice");
        return MPI_ERR_OTHER;
    }
    if ((rc = PMPI_Comm_rank(MPI_COMM_WORLD, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(MPI_COMM_WORLD, &size)) != MPI_SUCCESS)
        return rc;
    double t_start = sdnmpi_clock(), t_mpi = 0.0, t;
    for (int k = SDNMPI_T_INIT_ALLREDUCE; k <= SDNMPI_T_INIT_BCAST; k++)
        sdnmpi_timing_set((enum sdnmpi_tslot)k, 0.0);
    s->world_rank = rank;
    s->world_size = size;
    sdnmpi_env_load(&s->cfg);

    char how[192], ipbuf[INET_ADDRSTRLEN] = "?";
    s->fabric_ip = sdnmpi_fabric_ip(&s->cfg, rank, how, sizeof how);
    struct in_addr in = {.s_addr = s->fabric_ip};
    if (inet_ntop(AF_INET, &in, ipbuf, sizeof ipbuf) == NULL)
        snprintf(ipbuf, sizeof ipbuf, "?");
    sdnmpi_log("fabric address %s (%s)", ipbuf, how);

    struct agreement a;
    memset(&a, 0, sizeof a);
    if (rank == 0) {
        a.disable = s->cfg.disable;
        a.min_bytes = s->cfg.min_bytes;
        a.min_bytes_set = s->cfg.min_bytes_set;
        a.max_bytes = s->cfg.max_bytes;
        a.rab_min = s->cfg.rab_min;
        a.reorder = s->cfg.reorder;
        a.plan_ahead = s->cfg.plan_ahead;
        a.lib_comm = s->cfg.lib_comm;
        int level = MPI_THREAD_SINGLE;
        a.agree_steps = PMPI_Query_thread(&level) == MPI_SUCCESS && level < MPI_THREAD_MULTIPLE;
        memcpy(a.planner, s->cfg.planner, sizeof a.planner);
        a.bcast_min_bytes = s->cfg.bcast_min_bytes;
        a.bcast_min_hosts = s->cfg.bcast_min_hosts;
        a.bcast_rate_mbps = s->cfg.bcast_rate_mbps;
        a.bcast_rounds = s->cfg.bcast_rounds;
        a.bcast_trees = s->cfg.bcast_trees;
        a.bcast_idle_ms = s->cfg.bcast_idle_ms;
        a.bcast_datagram = s->cfg.bcast_datagram;
        a.alltoall_segment = s->cfg.alltoall_segment;
        a.alltoall_grid = s->cfg.alltoall_grid;
        a.reduce_chain_min = s->cfg.reduce_chain_min;
        a.reduce_segment = s->cfg.reduce_segment;
        a.allgather_cycles_min = s->cfg.allgather_cycles_min;
        a.reason = s->cfg.disable ? R_DISABLED : !s->cfg.has_controller ? R_NO_CONTROLLER : R_ON;
    }
    /* Every rank keeps every rank's fabric address (the flow hints name peers by rank): two
     * collectives (init_exchange.h), the Gather to world rank 0, which registers, then the Bcast of
     * its agreement with the addresses. */
    struct sdnmpi_init_exchange x;
    t = sdnmpi_clock();
    rc = sdnmpi_init_gather(rank, size, s->fabric_ip, &x);
    t_mpi += sdnmpi_clock() - t;
    s->world_ips = x.ips;
    if (rc != MPI_SUCCESS)
        goto out;
    if (rank == 0 && a.reason == R_ON && x.nomem)
        a.reason = R_NOMEM;
    if (rank == 0 && a.reason == R_ON) {
        register_job(s->world_ips, size, &a);
        if (a.ok) {
            s->job = a.job; /* the trace's traffic ops name the job */
            sdnmpi_traffic_send_trace(s->world_ips, size);
        }
    } else if (rank == 0) {
        sdnmpi_log("init: %s, falling back to PMPI_Allreduce", reasons[a.reason]);
    }
    if (rank == 0 && !a.ok && s->cfg.traffic[0] != '\0')
        sdnmpi_log("init: SDN_MPI_TRAFFIC not sent: %s", reasons[a.reason]);
    t = sdnmpi_clock();
    rc = sdnmpi_init_bcast(&a, sizeof a, size, &x);
    t_mpi += sdnmpi_timing_step(SDNMPI_T_INIT_BCAST, t) - t;
    if (rc != MPI_SUCCESS)
        goto out;
    if ((rc = sdnmpi_plan_keyval_create()) != MPI_SUCCESS
        || (rc = sdnmpi_bcast_keyval_create()) != MPI_SUCCESS
        || (rc = sdnmpi_reconnect_keyval_create()) != MPI_SUCCESS
        || (rc = sdnmpi_plan_ahead_keyval_create()) != MPI_SUCCESS)
        goto out;

    s->sdn_ok = (int)a.ok;
    s->job = a.job;
    s->job.token[sizeof s->job.token - 1] = '\0';
    memset(&a.job, 0, sizeof a.job);
    s->off_reason = a.ok ? NULL : reasons[a.reason >= 0 && a.reason <= R_NOMEM ? a.reason : R_UNREACHABLE];
    s->cfg.disable = (int)a.disable;
    s->cfg.min_bytes = a.min_bytes;
    s->cfg.min_bytes_set = (int)a.min_bytes_set;
    s->cfg.max_bytes = a.max_bytes;
    s->cfg.rab_min = a.rab_min;
    s->cfg.reorder = (int)a.reorder;
    s->cfg.plan_ahead = (int)a.plan_ahead;
    s->cfg.lib_comm = (int)a.lib_comm;
    s->agree_steps = (int)a.agree_steps;
    memcpy(s->cfg.planner, a.planner, sizeof a.planner);
    s->cfg.planner[sizeof s->cfg.planner - 1] = '\0';
    s->cfg.bcast_min_bytes = a.bcast_min_bytes;
    s->cfg.bcast_min_hosts = (int)a.bcast_min_hosts;
    s->cfg.bcast_rate_mbps = (int)a.bcast_rate_mbps;
    s->cfg.bcast_rounds = (int)a.bcast_rounds;
    s->cfg.bcast_trees = (int)a.bcast_trees;
    s->cfg.bcast_idle_ms = (int)a.bcast_idle_ms;
    s->cfg.bcast_datagram = (int)a.bcast_datagram;
    s->cfg.alltoall_segment = a.alltoall_segment;
    s->cfg.alltoall_grid = (int)a.alltoall_grid;
    s->cfg.reduce_chain_min = a.reduce_chain_min;
    s->cfg.reduce_segment = a.reduce_segment;
    s->cfg.allgather_cycles_min = a.allgather_cycles_min;
    s->initialized = 1;
    if (s->sdn_ok && sdnmpi_traffic_hook_add() != 0)
        sdnmpi_warn("init: no phase hook slot left; MPI_Pcontrol phases are not sent to the controller");
    sdnmpi_plan_ahead_start(); /* world rank 0, if it may: the world's plan request */
    /* the plans' parent (plan_comm.h), made (or started, deferred) while nothing of the
     * application's can be pending on the world (and while the controller plans the world's
     * request just sent); without it (SDN_MPI_LIB_COMM=0, or a failure, logged) the plans split
     * their communicators */
    if (s->sdn_ok && s->cfg.lib_comm != SDNMPI_LIB_COMM_OFF) {
        t = sdnmpi_clock();
        (void)sdnmpi_plan_comm_init(s->cfg.lib_comm == SDNMPI_LIB_COMM_DEFER);
        t_mpi += sdnmpi_clock() - t;
    }
    if (rank != 0) {
        if (s->sdn_ok)
            sdnmpi_log("init: job %" PRId64 ", SDN path on", s->job.id);
        else
            sdnmpi_log("init: %s, falling back to PMPI_Allreduce", s->off_reason);
    }
out:
    sdnmpi_timing_set(SDNMPI_T_INIT_MPI, t_mpi);
    sdnmpi_timing_set(SDNMPI_T_INIT, sdnmpi_clock() - t_start);
    if (rc != MPI_SUCCESS || !s->sdn_ok) {
        free(s->world_ips);
        s->world_ips = NULL;
        free(s->world_leaf);
        s->world_leaf = NULL;
    }
    if (rc != MPI_SUCCESS && rank == 0)
        sdnmpi_conn_close(&s->conn); /* closing releases the job on the controller */
    return rc;
}

SDNMPI_EXPORT int SDN_MPI_Finalize(void)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    if (!s->initialized || s->finalized)
        return MPI_ERR_OTHER;
    s->finalized = 1;
    sdnmpi_traffic_hook_remove();
    int rc = sdnmpi_plan_keyval_free();
    int rc2 = sdnmpi_bcast_keyval_free();
    int rc3 = sdnmpi_reconnect_keyval_free();
    int rc4 = sdnmpi_commattr_keyval_free(&s->ahead_keyval); /* the release below reads a reply
                                                               left first */
    int rc5 = sdnmpi_plan_comm_free(); /* after the world's plan, which may share it */
    if (rc == MPI_SUCCESS)
        rc = rc2 != MPI_SUCCESS ? rc2 : rc3 != MPI_SUCCESS ? rc3 : rc4 != MPI_SUCCESS ? rc4 : rc5;
    /* Every rank is done with its plans and its data before the routes go away. */
    int brc = PMPI_Barrier(MPI_COMM_WORLD);
    if (pthread_mutex_lock(&s->lock) == 0) {
        if (s->world_rank == 0 && s->sdn_ok && s->conn.holds_job) {
            char why[256] = "";
            if (sdnmpi_conn_release(&s->conn, &s->cfg, &s->job, why, sizeof why) == SDNMPI_CTRL_OK)
                sdnmpi_log("finalize: job %" PRId64 " released", s->job.id);
            else
                sdnmpi_log("finalize: release of job %" PRId64 " failed (%s); closing the "
                           "connection releases it", s->job.id, why);
        }
        sdnmpi_conn_close(&s->conn);
        memset(s->job.token, 0, sizeof s->job.token);
        free(s->world_ips);
        s->world_ips = NULL;
        free(s->world_leaf);
        s->world_leaf = NULL;
        (void)pthread_mutex_unlock(&s->lock);
    }
    return rc != MPI_SUCCESS ? rc : brc;
}
