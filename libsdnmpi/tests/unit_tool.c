/*
 * unit_tool.c -- exposes libsdnmpi's pure parts (schedule, RPC encoding/decoding, knob parsing)
 * to tests/unit/test_libsdnmpi.py, which checks them against the Python reference
 * (primitives/schedule.py, controller/rpc_schema.py). No MPI_Init.
 *
 *   unit_tool schedule IP...                   host steps of the ranks living on IP... (JSON)
 *   unit_tool order LOADS|- IP...              Rabenseifner's halving order (JSON list) for the
 *                                              ranks on IP..., LOADS = step loads "0,1,1"
 *   unit_tool encode hello ID                  one request frame on stdout
 *   unit_tool encode register ID IP...
 *   unit_tool encode plan ID JOB COMM PLANNER|- IP...   (steps of the ranks on IP...)
 *   unit_tool encode plan_bcast ID JOB COMM ROOT_IP IP...   (members IP...)
 *   unit_tool encode plan_bcast_trees ID JOB COMM TREES ROOT_IP IP...
 *   unit_tool encode locate ID IP...           (job 42, token "tok42")
 *   unit_tool encode release ID JOB
 *   unit_tool encode traffic ID JOB PHASE ADD PLANNER|- SRC,DST,BYTES...
 *   unit_tool encode phase ID JOB RANK PHASE
 *                                              (JOB: "ID:TOKEN", the job id and its token)
 *   unit_tool read PATH MAX_BYTES IP...        a trace's demand for ranks on IP... (trace_read.h):
 *                                              {"phases": [{"phase": k, "pairs": [[src, dst, bytes]]}]}
 *                                              or {"error": "..."}
 *   unit_tool wire TAG EPOCH ROUND KIND INDEX   a Bcast datagram header, hex on stdout
 *   unit_tool unwire HEX                       the header fields, or "invalid"
 *   unit_tool decode                           a reply body on stdin -> JSON of what was parsed
 *   unit_tool hostport TEXT                    "host port" or "invalid"
 *   unit_tool hier-segment                     SDN_MPI_HIER_SEGMENT read: "layout", "unlimited" or N
 *   unit_tool a2a-sched GRID K0 K1 ...         SDN_MPI_Alltoall's schedule (alltoall_sched.h) for
 *                                              leaves of K0, K1, ... ranks (leaf by leaf), GRID 0/1:
 *                                              {"grid": [L, m], "to": [[...]], "from": [[...]]},
 *                                              one list per step k = 1 .. p-1, indexed by rank
 *   unit_tool heavy SHARE SRC,DST,BYTES...     the pairs sdnmpi_traffic_heavy keeps (one a line)
 *   unit_tool send-traffic NHOSTS PHASE        not pure: registers hosts 10.255.0.1..NHOSTS with
 *                                              the controller at SDN_MPI_CONTROLLER and sends every
 *                                              ordered pair of them (bytes 1000 + its index) as
 *                                              PHASE's demand with sdnmpi_traffic_send_pairs:
 *                                              {"requests": R, "flows": F, "pairs": P,
 *                                              "chunk": SDNMPI_TRAFFIC_CHUNK_PAIRS} or
 *                                              {"error": "...", "requests": R}
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alltoall_sched.h"
#include "bcast_wire.h"
#include "env.h"
#include "rpc.h"
#include "schedule.h"
#include "trace_read.h"
#include "traffic.h"

static int parse_ips(int n, char **text, uint32_t *out)
{
    for (int i = 0; i < n; i++) {
        struct in_addr in;
        if (inet_pton(AF_INET, text[i], &in) != 1) {
            fprintf(stderr, "bad ip %s\n", text[i]);
            return -1;
        }
        out[i] = in.s_addr;
    }
    return 0;
}

static const char *ip_text(uint32_t ip, char *buf)
{
    struct in_addr in = {.s_addr = ip};
    return inet_ntop(AF_INET, &in, buf, INET_ADDRSTRLEN) ? buf : "?";
}

static int build_steps(int p, char **text, struct sdnmpi_host_steps *hs)
{
    uint32_t *ips = malloc((size_t)(p > 0 ? p : 1) * sizeof *ips);
    if (ips == NULL || parse_ips(p, text, ips)) {
        free(ips);
        return -1;
    }
    int rc = sdnmpi_host_steps_build(p, ips, SDNMPI_RPC_MAX_PAIRS, hs);
    free(ips);
    return rc;
}

static int cmd_schedule(int p, char **text)
{
    struct sdnmpi_host_steps hs;
    int rc = build_steps(p, text, &hs);
    if (rc) {
        printf("{\"error\": %d}\n", rc);
        return 0;
    }
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    printf("[");
    for (int s = 0; s < hs.nsteps; s++) {
        printf("%s[", s ? ", " : "");
        for (size_t i = hs.start[s]; i < hs.start[s + 1]; i++)
            printf("%s[\"%s\", \"%s\", %u]", i > hs.start[s] ? ", " : "", ip_text(hs.pairs[i].src, a),
                   ip_text(hs.pairs[i].dst, b), (unsigned)hs.pairs[i].count);
        printf("]");
    }
    printf("]\n");
    sdnmpi_host_steps_free(&hs);
    return 0;
}

static int write_buf(const struct sdnmpi_rpc_buf *buf)
{
    return fwrite(buf->data, 1, buf->len, stdout) == buf->len ? 0 : 1;
}

/* "ID:TOKEN" (or "ID": an empty token) */
static struct sdnmpi_job_ref job_arg(const char *text)
{
    struct sdnmpi_job_ref job = {.id = atoll(text)};
    const char *colon = strchr(text, ':');
    if (colon != NULL)
        snprintf(job.token, sizeof job.token, "%s", colon + 1);
    return job;
}

/* "SRC,DST,BYTES" each */
static int parse_pairs(size_t n, char **text, struct sdnmpi_traffic_pair *pairs)
{
    for (size_t i = 0; i < n; i++) {
        char src[32], dst[32];
        long long bytes;
        if (sscanf(text[i], "%31[^,],%31[^,],%lld", src, dst, &bytes) != 3) {
            fprintf(stderr, "bad pair %s\n", text[i]);
            return -1;
        }
        char *ips[2] = {src, dst};
        uint32_t ip[2];
        if (parse_ips(2, ips, ip))
            return -1;
        pairs[i].src = ip[0];
        pairs[i].dst = ip[1];
        pairs[i].bytes = bytes;
    }
    return 0;
}

static int cmd_encode(int argc, char **argv)
{
    static const struct sdnmpi_job_ref job42 = {.id = 42, .token = "tok42"};
    struct sdnmpi_rpc_buf buf = {0};
    int rc = -1;
    if (argc >= 2 && !strcmp(argv[0], "hello")) {
        rc = sdnmpi_rpc_encode_hello(&buf, atoll(argv[1]));
    } else if (argc >= 2 && (!strcmp(argv[0], "register") || !strcmp(argv[0], "locate"))) {
        int n = argc - 2;
        uint32_t *ips = malloc((size_t)(n > 0 ? n : 1) * sizeof *ips);
        if (ips != NULL && !parse_ips(n, argv + 2, ips))
            rc = !strcmp(argv[0], "register")
                     ? sdnmpi_rpc_encode_register(&buf, atoll(argv[1]), ips, (size_t)n)
                     : sdnmpi_rpc_encode_locate(&buf, atoll(argv[1]), &job42, ips, (size_t)n);
        free(ips);
    } else if (argc >= 5 && !strcmp(argv[0], "plan")) {
        struct sdnmpi_host_steps hs;
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        if (build_steps(argc - 5, argv + 5, &hs) == 0) {
            rc = sdnmpi_rpc_encode_plan_allreduce(&buf, atoll(argv[1]), &job,
                                                  atoll(argv[3]),
                                                  strcmp(argv[4], "-") ? argv[4] : NULL, &hs);
            sdnmpi_host_steps_free(&hs);
        }
    } else if ((argc >= 5 && !strcmp(argv[0], "plan_bcast"))
               || (argc >= 6 && !strcmp(argv[0], "plan_bcast_trees"))) {
        int skip = strcmp(argv[0], "plan_bcast") != 0, trees = skip ? atoi(argv[4]) : 1;
        int n = argc - 5 - skip;
        uint32_t *ips = malloc((size_t)(n > 0 ? n : 1) * sizeof *ips);
        uint32_t root;
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        if (ips != NULL && !parse_ips(1, argv + 4 + skip, &root) && !parse_ips(n, argv + 5 + skip, ips))
            rc = sdnmpi_rpc_encode_plan_bcast(&buf, atoll(argv[1]), &job, atoll(argv[3]),
                                              root, ips, (size_t)n, trees);
        free(ips);
    } else if (argc >= 3 && !strcmp(argv[0], "release")) {
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        rc = sdnmpi_rpc_encode_release(&buf, atoll(argv[1]), &job);
    } else if (argc >= 6 && !strcmp(argv[0], "traffic")) {
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        size_t n = (size_t)(argc - 6);
        struct sdnmpi_traffic_pair *pairs = calloc(n + 1, sizeof *pairs);
        if (pairs == NULL || parse_pairs(n, argv + 6, pairs)) {
            free(pairs);
            return 2;
        }
        rc = sdnmpi_rpc_encode_traffic(&buf, atoll(argv[1]), &job, atoi(argv[3]), pairs, n,
                                       atoi(argv[4]), strcmp(argv[5], "-") ? argv[5] : NULL);
        free(pairs);
    } else if (argc == 5 && !strcmp(argv[0], "phase")) {
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        rc = sdnmpi_rpc_encode_phase(&buf, atoll(argv[1]), &job, atoll(argv[3]), atoi(argv[4]));
    } else {
        fprintf(stderr, "bad encode arguments\n");
        return 2;
    }
    if (rc) {
        fprintf(stderr, "encode failed%s\n", buf.overflow ? " (oversized)" : "");
        sdnmpi_rpc_buf_free(&buf);
        return 3;
    }
    int out = write_buf(&buf);
    sdnmpi_rpc_buf_free(&buf);
    return out;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static int cmd_decode(void)
{
    static char body[SDNMPI_RPC_MAX_FRAME + 1];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof body && (r = read(STDIN_FILENO, body + n, sizeof body - n)) > 0)
        n += (size_t)r;
    struct sdnmpi_rpc_reply rep = {0};
    if (sdnmpi_rpc_decode_reply(body, n, &rep)) {
        printf("{\"valid\": false}\n");
        return 0;
    }
    printf("{\"valid\": true, \"id\": %lld, \"ok\": %d, \"error\": ", (long long)rep.id, rep.ok);
    json_str(rep.error);
    printf(", \"server\": ");
    json_str(rep.server);
    printf(", \"token\": ");
    json_str(rep.token);
    printf(", \"job\": %lld, \"flows\": %lld, \"n_max_load\": %zu, \"max_load\": [", (long long)rep.job,
           (long long)rep.flows, rep.n_max_load);
    for (size_t i = 0; i < rep.n_max_load && i < SDNMPI_RPC_MAX_LOADS; i++)
        printf("%s%lld", i ? ", " : "", (long long)rep.max_load[i]);
    printf("], \"total_s\": %.6f, \"plan_s\": %.6f, \"install_s\": %.6f", rep.total_s, rep.plan_s,
           rep.install_s);
    printf(", \"group\": ");
    json_str(rep.group);
    printf(", \"port\": %lld, \"switches\": %lld, \"top\": ", (long long)rep.port,
           (long long)rep.switches);
    json_str(rep.top);
    printf(", \"cached\": %d, \"n_trees\": %zu, \"trees\": [", rep.cached, rep.n_trees);
    for (size_t i = 0; i < rep.n_trees && i < SDNMPI_RPC_MAX_TREES; i++) {
        printf("%s{\"group\": ", i ? ", " : "");
        json_str(rep.tree_group[i]);
        printf(", \"port\": %lld}", (long long)rep.tree_port[i]);
    }
    printf("]");
    printf(", \"node_load\": %lld, \"traffic_max_load\": %lld, \"stored\": %d, \"installed\": %d}\n",
           (long long)rep.node_load, (long long)rep.plan_max_load, rep.stored, rep.installed);
    return 0;
}

static int cmd_read(const char *path, const char *max, int n, char **text)
{
    uint32_t *ips = malloc((size_t)(n > 0 ? n : 1) * sizeof *ips);
    if (ips == NULL || parse_ips(n, text, ips)) {
        free(ips);
        return 2;
    }
    struct sdnmpi_trace_demand d;
    char why[512];
    if (sdnmpi_trace_read(path, ips, n, strtoull(max, NULL, 10), &d, why, sizeof why)) {
        printf("{\"error\": ");
        json_str(why);
        printf("}\n");
        free(ips);
        return 0;
    }
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    printf("{\"phases\": [");
    for (int k = 0; k < d.nphases; k++) {
        printf("%s{\"phase\": %d, \"pairs\": [", k ? ", " : "", d.phase[k].phase);
        for (size_t i = 0; i < d.phase[k].npairs; i++) {
            const struct sdnmpi_traffic_pair *p = &d.phase[k].pairs[i];
            printf("%s[\"%s\", \"%s\", %lld]", i ? ", " : "", ip_text(p->src, a), ip_text(p->dst, b),
                   (long long)p->bytes);
        }
        printf("]}");
    }
    printf("]}\n");
    sdnmpi_trace_demand_free(&d);
    free(ips);
    return 0;
}

static int cmd_wire(char **argv)
{
    struct sdnmpi_wire_hdr h = {.tag = (uint32_t)strtoul(argv[0], NULL, 0),
                                .epoch = (uint32_t)strtoul(argv[1], NULL, 0),
                                .round = (uint16_t)strtoul(argv[2], NULL, 0),
                                .kind = (uint16_t)strtoul(argv[3], NULL, 0),
                                .index = (uint32_t)strtoul(argv[4], NULL, 0)};
    unsigned char out[SDNMPI_WIRE_HEADER];
    sdnmpi_wire_encode(&h, out);
    for (size_t i = 0; i < sizeof out; i++)
        printf("%02x", out[i]);
    printf("\n");
    return 0;
}

static int cmd_unwire(const char *hex)
{
    unsigned char buf[64];
    size_t n = 0;
    while (hex[0] && hex[1] && n < sizeof buf) {
        unsigned v;
        if (sscanf(hex, "%2x", &v) != 1)
            break;
        buf[n++] = (unsigned char)v;
        hex += 2;
    }
    struct sdnmpi_wire_hdr h;
    if (sdnmpi_wire_decode(buf, n, &h)) {
        printf("invalid\n");
        return 0;
    }
    printf("%u %u %u %u %u\n", (unsigned)h.tag, (unsigned)h.epoch, (unsigned)h.round,
           (unsigned)h.kind, (unsigned)h.index);
    return 0;
}

static int cmd_order(const char *loads_text, int p, char **text)
{
    int64_t loads[64];
    size_t nloads = 0;
    if (strcmp(loads_text, "-")) {
        char *copy = strdup(loads_text), *save = NULL;
        if (copy == NULL)
            return 1;
        for (char *t = strtok_r(copy, ",", &save); t != NULL && nloads < 64;
             t = strtok_r(NULL, ",", &save))
            loads[nloads++] = atoll(t);
        free(copy);
    }
    uint32_t *ips = malloc((size_t)(p > 0 ? p : 1) * sizeof *ips);
    if (ips == NULL || parse_ips(p, text, ips)) {
        free(ips);
        return 1;
    }
    int dist[SDNMPI_RD_MAX_DIMS];
    int n = sdnmpi_rab_order(p, ips, strcmp(loads_text, "-") ? loads : NULL, nloads, dist);
    printf("[");
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", dist[i]);
    printf("]\n");
    free(ips);
    return 0;
}

static int cmd_heavy(int share, int n, char **text)
{
    struct sdnmpi_traffic_pair *pairs = calloc((size_t)n + 1, sizeof *pairs);
    if (pairs == NULL || parse_pairs((size_t)n, text, pairs)) {
        free(pairs);
        return 2;
    }
    size_t kept = sdnmpi_traffic_heavy(pairs, (size_t)n, share);
    char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
    for (size_t i = 0; i < kept; i++)
        printf("%s,%s,%lld\n", ip_text(pairs[i].src, a), ip_text(pairs[i].dst, b),
               (long long)pairs[i].bytes);
    free(pairs);
    return 0;
}

static int cmd_send_traffic(int nhosts, int phase)
{
    if (nhosts < 2 || nhosts > 254)
        return 2;
    struct sdnmpi_config cfg;
    sdnmpi_env_load(&cfg);
    size_t npairs = (size_t)nhosts * (size_t)(nhosts - 1);
    uint32_t ips[254];
    struct sdnmpi_traffic_pair *pairs = malloc(npairs * sizeof *pairs);
    if (pairs == NULL)
        return 1;
    for (int i = 0; i < nhosts; i++)
        ips[i] = htonl(0x0aff0000u | (uint32_t)(i + 1));
    size_t k = 0;
    for (int i = 0; i < nhosts; i++)
        for (int j = 0; j < nhosts; j++)
            if (i != j) {
                pairs[k].src = ips[i];
                pairs[k].dst = ips[j];
                pairs[k].bytes = 1000 + (int64_t)k;
                k++;
            }
    struct sdnmpi_conn c;
    struct sdnmpi_job_ref job;
    struct sdnmpi_rpc_reply total = {0};
    size_t requests = 0;
    char why[256] = "";
    sdnmpi_conn_init(&c);
    int rc = sdnmpi_conn_open(&c, &cfg, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_conn_register(&c, &cfg, ips, (size_t)nhosts, &job, NULL, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_traffic_send_pairs(&c, &cfg, &job, phase, pairs, npairs, 0, &total, &requests,
                                       why, sizeof why);
    if (rc == SDNMPI_CTRL_OK) {
        printf("{\"requests\": %zu, \"flows\": %lld, \"pairs\": %zu, \"chunk\": %d}\n", requests,
               (long long)total.flows, npairs, (int)SDNMPI_TRAFFIC_CHUNK_PAIRS);
    } else {
        printf("{\"error\": ");
        json_str(why);
        printf(", \"requests\": %zu}\n", requests);
    }
    sdnmpi_conn_close(&c);
    free(pairs);
    return 0;
}

static int cmd_a2a_sched(int grid, int nleaves, char **sizes)
{
    int start[SDNMPI_ALLTOALL_GRID_MAX_STEPS + 2] = {0};
    if (nleaves < 1 || nleaves > SDNMPI_ALLTOALL_GRID_MAX_STEPS)
        return 2;
    for (int g = 0; g < nleaves; g++) {
        int k = atoi(sizes[g]);
        if (k < 1 || start[g] + k > SDNMPI_ALLTOALL_GRID_MAX_STEPS + 1)
            return 2;
        start[g + 1] = start[g] + k;
    }
    struct sdnmpi_alltoall_sched sc;
    const int p = start[nleaves];
    sdnmpi_alltoall_sched_init(&sc, p, start, nleaves, grid);
    printf("{\"grid\": [%d, %d]", sc.leaves, sc.lanes);
    for (int dir = 0; dir < 2; dir++) {
        printf(", \"%s\": [", dir ? "from" : "to");
        for (int k = 1; k < p; k++) {
            printf("%s[", k > 1 ? ", " : "");
            for (int q = 0; q < p; q++) {
                int to, from;
                sdnmpi_alltoall_sched_peer(&sc, q, k, &to, &from);
                printf("%s%d", q ? ", " : "", dir ? from : to);
            }
            printf("]");
        }
        printf("]");
    }
    printf("}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "a2a-sched"))
        return cmd_a2a_sched(atoi(argv[2]), argc - 3, argv + 3);
    if (argc >= 3 && !strcmp(argv[1], "heavy"))
        return cmd_heavy(atoi(argv[2]), argc - 3, argv + 3);
    if (argc == 4 && !strcmp(argv[1], "send-traffic"))
        return cmd_send_traffic(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && !strcmp(argv[1], "order"))
        return cmd_order(argv[2], argc - 3, argv + 3);
    if (argc >= 2 && !strcmp(argv[1], "schedule"))
        return cmd_schedule(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "encode"))
        return cmd_encode(argc - 2, argv + 2);
    if (argc == 2 && !strcmp(argv[1], "decode"))
        return cmd_decode();
    if (argc >= 4 && !strcmp(argv[1], "read"))
        return cmd_read(argv[2], argv[3], argc - 4, argv + 4);
    if (argc == 7 && !strcmp(argv[1], "wire"))
        return cmd_wire(argv + 2);
    if (argc == 3 && !strcmp(argv[1], "unwire"))
        return cmd_unwire(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "hostport")) {
        char host[SDNMPI_HOST_MAX], port[SDNMPI_PORT_MAX];
        if (sdnmpi_env_split_hostport(argv[2], host, sizeof host, port, sizeof port))
            printf("invalid\n");
        else
            printf("%s %s\n", host, port);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "hier-segment")) {
        struct sdnmpi_config cfg;
        sdnmpi_env_load(&cfg);
        if (cfg.hier_segment >= SDNMPI_HIER_SEGMENT_BY_LAYOUT)
            return printf("%s\n", cfg.hier_segment == UINT64_MAX ? "unlimited" : "layout") < 0;
        return printf("%llu\n", (unsigned long long)cfg.hier_segment) < 0;
    }
    fprintf(stderr, "usage: see the comment at the top of unit_tool.c\n");
    return 2;
}
