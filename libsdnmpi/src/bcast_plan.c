/* bcast_plan.c -- per-communicator Bcast state and multicast trees, cached (bcast_plan.h). */
#include "bcast_plan.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commattr.h"
#include "controller.h"
#include "log.h"
#include "mcast.h"
#include "plan.h"
#include "plan_comm.h"
#include "rpc.h"
#include "sock.h"
#include "state.h"
#include "timing.h"

/* Receive buffer of every receiving socket: room for a scheduling hiccup of the rank at the
 * multicast rate (the kernel counts a datagram's full buffer, about twice its payload). */
#define RCVBUF_BYTES (8 << 20)

void sdnmpi_bcast_tree_close(struct sdnmpi_bcast_tree *t)
{
    for (int j = 0; j < SDNMPI_BCAST_MAX_TREES; j++)
        sdnmpi_mcast_close(&t->fd[j]);
}

static void comm_free(struct sdnmpi_bcast_comm *bc)
{
    if (bc == NULL)
        return;
    if (bc->trees != NULL)
        for (int r = 0; r < bc->size; r++)
            sdnmpi_bcast_tree_close(&bc->trees[r]);
    if (bc->priv != MPI_COMM_NULL) {
        /* During MPI_Finalize's own teardown of leaked communicators MPI is past freeing
         * anything; it reclaims the private communicator itself. */
        int finalized = 1;
        if (PMPI_Finalized(&finalized) == MPI_SUCCESS && !finalized)
            (void)PMPI_Comm_free(&bc->priv); /* nothing to do about a failure here */
    }
    free(bc->ips);
    free(bc->trees);
    free(bc);
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    comm_free(attr);
    return MPI_SUCCESS;
}

int sdnmpi_bcast_keyval_create(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &sdnmpi_g.bcast_keyval,
                                   NULL);
}

int sdnmpi_bcast_keyval_free(void)
{
    return sdnmpi_commattr_keyval_free(&sdnmpi_g.bcast_keyval);
}

/* What the communicator's rank 0 decides and every rank needs before the private communicator
 * exists: one bitwise-or PMPI_Allreduce on the application's communicator (a plain collective, no
 * context-id agreement there, so it cannot race an MPI_Comm_idup of it that is pending), to which
 * every other rank adds only its own two flags. */
enum {
    AG_FAIL,  /* some rank is out of memory: no state this time */
    AG_NOLIB, /* some rank cannot make it on the library's communicator: duplicate comm instead */
    AG_TAG,   /* rank 0's tag for the creation on the library's communicator (plan_comm.h) */
    AG_ID,    /* rank 0's communicator id (-1: its state lock is broken) */
    AG_N
};

/* Rank 0: the communicator id and, if it may use the library's communicator, the tag. */
static void leader_decide(int is_world, int64_t mine[AG_N])
{
    struct sdnmpi_state *s = &sdnmpi_g;
    mine[AG_ID] = -1;
    if (pthread_mutex_lock(&s->lock) != 0) {
        mine[AG_NOLIB] = 1; /* no tag: duplicate, as without the library's communicator */
        return;
    }
    mine[AG_ID] = sdnmpi_plan_next_comm_id_locked(is_world);
    if (!mine[AG_NOLIB])
        mine[AG_TAG] = sdnmpi_plan_comm_tag_locked();
    (void)pthread_mutex_unlock(&s->lock);
}

/* The private communicator of comm's Bcast state (plan_comm.h): a group's creation on the
 * library's communicator, or, if some rank has none, comm's duplicate as before. */
static int priv_make(MPI_Comm comm, const int64_t agreed[AG_N], int rank, int p, MPI_Comm *priv)
{
    int rc = agreed[AG_NOLIB] ? PMPI_Comm_dup(comm, priv)
                              : sdnmpi_plan_comm_own(comm, (int)agreed[AG_TAG], priv);
    if (rc == MPI_SUCCESS && rank == 0 && agreed[AG_NOLIB])
        sdnmpi_log("bcast comm=%" PRId64 " ranks=%d: private communicator: a duplicate of the "
                   "communicator (no library communicator on some rank)", agreed[AG_ID], p);
    else if (rc == MPI_SUCCESS && rank == 0)
        sdnmpi_log("bcast comm=%" PRId64 " ranks=%d: private communicator: a group's creation on "
                   "the library's (tag %" PRId64 ")", agreed[AG_ID], p, agreed[AG_TAG]);
    return rc;
}

/* Makes and caches the Bcast state of comm (collective). *out NULL: some rank is out of memory. */
static int comm_create(MPI_Comm comm, struct sdnmpi_bcast_comm **out)
{
    struct sdnmpi_state *s = &sdnmpi_g;
    struct sdnmpi_bcast_comm *bc = NULL;
    MPI_Comm priv = MPI_COMM_NULL;
    int rank, p, rc, covers = 0;
    int64_t mine[AG_N] = {0}, agreed[AG_N] = {0};

    *out = NULL;
    (void)sdnmpi_plan_comm_ready(); /* deferred (plan_comm.h): complete it; a failure leaves none */
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS
        || (rc = PMPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return rc;
    /* Allocate everything first, then agree, so that a failure anywhere is everyone's. */
    bc = calloc(1, sizeof *bc);
    if (bc != NULL) {
        bc->priv = MPI_COMM_NULL;
        bc->rank = rank;
        bc->size = p;
        bc->ips = malloc((size_t)p * sizeof *bc->ips);
        bc->trees = calloc((size_t)p, sizeof *bc->trees);
        if (bc->trees != NULL)
            for (int r = 0; r < p; r++)
                for (int j = 0; j < SDNMPI_BCAST_MAX_TREES; j++)
                    bc->trees[r].fd[j] = -1;
    }
    mine[AG_FAIL] = bc == NULL || bc->ips == NULL || bc->trees == NULL;
    mine[AG_NOLIB] = sdnmpi_plan_comm_covers(comm, &covers) != MPI_SUCCESS || !covers;
    if (rank == 0 && !mine[AG_FAIL])
        leader_decide(comm == MPI_COMM_WORLD, mine);
    if ((rc = PMPI_Allreduce(mine, agreed, AG_N, MPI_INT64_T, MPI_BOR, comm)) != MPI_SUCCESS)
        goto fail;
    if (agreed[AG_FAIL]) {
        if (rank == 0)
            sdnmpi_log("bcast ranks=%d: out of memory on some rank, falling back for this call", p);
        goto fail; /* rc is MPI_SUCCESS: no state, fall back */
    }
    if ((rc = priv_make(comm, agreed, rank, p, &priv)) != MPI_SUCCESS)
        goto fail;
    bc->priv = priv; /* freed with bc from here on */
    bc->comm_id = agreed[AG_ID];
    if ((rc = PMPI_Allgather(&s->fabric_ip, 1, MPI_UINT32_T, bc->ips, 1, MPI_UINT32_T, priv))
        != MPI_SUCCESS)
        goto fail;
    /* sdnmpi_count_hosts can run out of memory on one rank only: agree. */
    bc->hosts = sdnmpi_count_hosts(bc->ips, p);
    int hosts_ok = bc->hosts > 0, all_hosts_ok = 0;
    if ((rc = PMPI_Allreduce(&hosts_ok, &all_hosts_ok, 1, MPI_INT, MPI_MIN, priv)) != MPI_SUCCESS)
        goto fail;
    if (!all_hosts_ok) {
        if (rank == 0)
            sdnmpi_log("bcast ranks=%d: out of memory on some rank, falling back for this call", p);
        goto fail;
    }
    if ((rc = PMPI_Comm_set_attr(comm, s->bcast_keyval, bc)) != MPI_SUCCESS)
        goto fail;
    *out = bc; /* owned by the attribute from here on */
    return MPI_SUCCESS;

fail:
    comm_free(bc); /* frees priv too (NULL: nothing) */
    return rc;
}

static uint32_t fnv1a(uint32_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (uint32_t)(v & 0xff);
        h *= 16777619u;
        v >>= 8;
    }
    return h;
}

static const char *ip_text(uint32_t ip, char *buf)
{
    struct in_addr in = {.s_addr = ip};
    return inet_ntop(AF_INET, &in, buf, INET_ADDRSTRLEN) ? buf : "?";
}

/* outcome[]: ok, trees, then group and port of each tree. */
#define OUTCOME_LEN (2 + 2 * SDNMPI_BCAST_MAX_TREES)

/* A reply's group text as a multicast address (network byte order) and port; 0, or -1 (`why`). */
static int valid_tree(const char *text, int64_t port, int64_t *group, char *why, size_t whylen)
{
    struct in_addr in = {.s_addr = 0};
    if (inet_pton(AF_INET, text, &in) != 1 || !sdnmpi_mcast_is_group(in.s_addr) || port < 1
        || port > 65535) {
        snprintf(why, whylen, "reply without a valid group (\"%s\") and port (%" PRId64 ")", text,
                 port);
        return -1;
    }
    *group = (int64_t)in.s_addr;
    return 0;
}

/* Rank 0: plan_bcast. outcome = {1, n, group 0, port 0, ...} if the controller installed trees:
 * the reply's `trees` (at most SDNMPI_BCAST_MAX_TREES of them), or its one group and port (a
 * controller that predates issue 17). */
static void leader_request(const struct sdnmpi_bcast_comm *bc, int root, int64_t outcome[OUTCOME_LEN])
{
    struct sdnmpi_state *s = &sdnmpi_g;
    char why[256] = "", rootip[INET_ADDRSTRLEN];
    struct sdnmpi_rpc_reply reply = {0};
    ip_text(bc->ips[root], rootip);
    if (bc->comm_id < 0) {
        sdnmpi_warn("bcast plan root=%d: cannot lock the library state, falling back", root);
        return;
    }
    int64_t t0 = sdnmpi_now_ms();
    double tc = sdnmpi_clock();
    if (pthread_mutex_lock(&s->lock) != 0) {
        sdnmpi_warn("bcast plan root=%d: cannot lock the library state, falling back", root);
        return;
    }
    int crc = sdnmpi_conn_open(&s->conn, &s->cfg, why, sizeof why);
    if (crc == SDNMPI_CTRL_OK)
        crc = sdnmpi_conn_plan_bcast(&s->conn, &s->cfg, &s->job, bc->comm_id, bc->ips[root],
                                     bc->ips, (size_t)bc->size, &reply, why, sizeof why);
    (void)pthread_mutex_unlock(&s->lock);
    double rtt = (double)(sdnmpi_now_ms() - t0) / 1000.0;
    sdnmpi_timing_set(SDNMPI_T_BCAST_REQUEST, sdnmpi_clock() - tc);
    sdnmpi_timing_set(SDNMPI_T_BCAST_CTRL, crc == SDNMPI_CTRL_OK ? reply.total_s : -1.0);
    sdnmpi_timing_set(SDNMPI_T_BCAST_CTRL_INSTALL, crc == SDNMPI_CTRL_OK ? reply.install_s : -1.0);
    int n = 1;
    if (crc == SDNMPI_CTRL_OK && reply.n_trees > 0) {
        n = reply.n_trees < SDNMPI_BCAST_MAX_TREES ? (int)reply.n_trees : SDNMPI_BCAST_MAX_TREES;
        for (int j = 0; j < n && crc == SDNMPI_CTRL_OK; j++)
            if (valid_tree(reply.tree_group[j], reply.tree_port[j], &outcome[2 + 2 * j], why,
                           sizeof why))
                crc = SDNMPI_CTRL_REFUSED;
            else
                outcome[3 + 2 * j] = reply.tree_port[j];
    } else if (crc == SDNMPI_CTRL_OK) {
        if (valid_tree(reply.group, reply.port, &outcome[2], why, sizeof why))
            crc = SDNMPI_CTRL_REFUSED;
        else
            outcome[3] = reply.port;
    }
    if (crc != SDNMPI_CTRL_OK) {
        sdnmpi_log("bcast plan comm=%" PRId64 " root=%d (%s) ranks=%d hosts=%d: failed after "
                   "%.3fs (%s), falling back",
                   bc->comm_id, root, rootip, bc->size, bc->hosts, rtt, why);
        return;
    }
    outcome[0] = 1;
    outcome[1] = n;
    sdnmpi_log("bcast plan comm=%" PRId64 " root=%d (%s) ranks=%d hosts=%d: ok group=%s:%" PRId64
               " trees=%d switches=%" PRId64 " top=%s%s in %.3fs (controller total %.3fs plan %.3fs "
               "install %.3fs)",
               bc->comm_id, root, rootip, bc->size, bc->hosts, reply.group, reply.port, n,
               reply.switches, reply.top[0] ? reply.top : "-", reply.cached ? " cached" : "", rtt,
               reply.total_s, reply.plan_s, reply.install_s);
}

/* The address of the interface the sockets use: the fabric address; loopback in the test-only
 * SDN_MPI_FAKE_HOSTS mode, where the fabric addresses are made up and every rank is local. */
static uint32_t iface_ip(void)
{
    return sdnmpi_g.cfg.fake_hosts > 0 ? htonl(INADDR_LOOPBACK) : sdnmpi_g.fabric_ip;
}

/* Plans the tree of `root` (collective over bc->priv). */
static int tree_plan(struct sdnmpi_bcast_comm *bc, int root)
{
    struct sdnmpi_bcast_tree *t = &bc->trees[root];
    int rc;
    t->state = SDNMPI_TREE_FAILED;
    t->tag = fnv1a(fnv1a(fnv1a(2166136261u, (uint64_t)sdnmpi_g.job.id), (uint64_t)bc->comm_id),
                   (uint64_t)root);
    if (bc->hosts == 1) {
        /* Identical on every rank (the addresses were gathered to all). */
        if (bc->rank == 0)
            sdnmpi_log("bcast plan comm=%" PRId64 " root=%d ranks=%d: all ranks on one host, "
                       "PMPI_Bcast (shared memory) is faster",
                       bc->comm_id, root, bc->size);
        return MPI_SUCCESS;
    }
    if (bc->hosts < sdnmpi_g.cfg.bcast_min_hosts) {
        if (bc->rank == 0)
            sdnmpi_log("bcast plan comm=%" PRId64 " root=%d ranks=%d hosts=%d: fewer than "
                       "SDN_MPI_BCAST_MIN_HOSTS=%d hosts, PMPI_Bcast (nothing for the switches "
                       "to copy)",
                       bc->comm_id, root, bc->size, bc->hosts, sdnmpi_g.cfg.bcast_min_hosts);
        return MPI_SUCCESS;
    }
    int64_t outcome[OUTCOME_LEN] = {0};
    if (bc->rank == 0)
        leader_request(bc, root, outcome);
    if ((rc = PMPI_Bcast(outcome, OUTCOME_LEN, MPI_INT64_T, 0, bc->priv)) != MPI_SUCCESS)
        return rc;
    if (!outcome[0] || outcome[1] < 1 || outcome[1] > SDNMPI_BCAST_MAX_TREES)
        return MPI_SUCCESS;
    t->n = (int)outcome[1];
    char why[192] = "";
    int local_ok = 1, all_ok = 0;
    for (int j = 0; j < t->n && local_ok; j++) {
        t->group[j] = (uint32_t)outcome[2 + 2 * j];
        t->port[j] = (uint16_t)outcome[3 + 2 * j];
        if (bc->rank == root)
            t->fd[j] = sdnmpi_mcast_sender(t->group[j], t->port[j], iface_ip(), why, sizeof why);
        else
            t->fd[j] = sdnmpi_mcast_receiver(t->group[j], t->port[j], iface_ip(), RCVBUF_BYTES, why,
                                             sizeof why);
        local_ok = t->fd[j] >= 0;
    }
    if (!local_ok)
        sdnmpi_log("bcast comm=%" PRId64 " root=%d: cannot open the %s socket (%s)", bc->comm_id,
                   root, bc->rank == root ? "sending" : "receiving", why);
    if ((rc = PMPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, bc->priv)) != MPI_SUCCESS) {
        sdnmpi_bcast_tree_close(t);
        return rc;
    }
    if (!all_ok) {
        sdnmpi_bcast_tree_close(t);
        if (bc->rank == 0)
            sdnmpi_log("bcast comm=%" PRId64 " root=%d: some rank could not open its socket, "
                       "falling back for this root",
                       bc->comm_id, root);
        return MPI_SUCCESS;
    }
    for (int j = 0; j < t->n; j++)
        t->rate_mbps[j] = sdnmpi_g.cfg.bcast_rate_mbps;
    t->blackouts = 0;
    t->state = SDNMPI_TREE_OK;
    return MPI_SUCCESS;
}

int sdnmpi_bcast_tree_get(MPI_Comm comm, int root, struct sdnmpi_bcast_comm **out)
{
    void *val = NULL;
    int flag = 0;
    int rc = PMPI_Comm_get_attr(comm, sdnmpi_g.bcast_keyval, &val, &flag);
    if (rc != MPI_SUCCESS)
        return rc;
    struct sdnmpi_bcast_comm *bc = val;
    *out = NULL;
    if (!flag) {
        double t0 = sdnmpi_clock();
        if ((rc = comm_create(comm, &bc)) != MPI_SUCCESS || bc == NULL)
            return rc;
        sdnmpi_timing_set(SDNMPI_T_BCAST_SETUP, sdnmpi_clock() - t0);
    }
    if (bc->trees[root].state == SDNMPI_TREE_UNPLANNED) {
        double t0 = sdnmpi_clock();
        if ((rc = tree_plan(bc, root)) != MPI_SUCCESS)
            return rc;
        sdnmpi_timing_set(SDNMPI_T_BCAST_TREE, sdnmpi_clock() - t0);
    }
    *out = bc;
    return MPI_SUCCESS;
}
