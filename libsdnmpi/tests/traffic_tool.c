/*
 * traffic_tool.c -- the pure parts of traffic-aware job routing for
 * tests/unit/test_libsdnmpi_traffic.py (no MPI_Init):
 *
 *   traffic_tool read PATH MAX_BYTES IP...     the trace's demand for ranks on IP... as JSON
 *                                              {"phases": [{"phase": k, "pairs": [[src, dst, bytes]]}]}
 *                                              or {"error": "..."}
 *   traffic_tool encode traffic ID ID:TOKEN PHASE ADD PLANNER|- SRC,DST,BYTES...
 *   traffic_tool encode phase ID ID:TOKEN RANK PHASE
 *                                              one request frame on stdout (exit 3 if refused)
 *   traffic_tool decode                        a reply body on stdin -> JSON of the traffic/phase
 *                                              fields
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc.h"
#include "trace_read.h"

static const char *ip_text(uint32_t ip, char *buf)
{
    struct in_addr in = {.s_addr = ip};
    return inet_ntop(AF_INET, &in, buf, INET_ADDRSTRLEN) ? buf : "?";
}

static int parse_ip(const char *text, uint32_t *out)
{
    struct in_addr in;
    if (inet_pton(AF_INET, text, &in) != 1)
        return -1;
    *out = in.s_addr;
    return 0;
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

static int cmd_read(const char *path, const char *max, int n, char **ips)
{
    uint32_t *ip = malloc((size_t)(n > 0 ? n : 1) * sizeof *ip);
    if (ip == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        if (parse_ip(ips[i], &ip[i])) {
            fprintf(stderr, "bad ip %s\n", ips[i]);
            free(ip);
            return 2;
        }
    struct sdnmpi_trace_demand d;
    char why[512];
    if (sdnmpi_trace_read(path, ip, n, strtoull(max, NULL, 10), &d, why, sizeof why)) {
        printf("{\"error\": ");
        json_str(why);
        printf("}\n");
        free(ip);
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
    free(ip);
    return 0;
}

static struct sdnmpi_job_ref job_arg(const char *text)
{
    struct sdnmpi_job_ref job = {.id = atoll(text)};
    const char *colon = strchr(text, ':');
    if (colon != NULL)
        snprintf(job.token, sizeof job.token, "%s", colon + 1);
    return job;
}

static int cmd_encode(int argc, char **argv)
{
    struct sdnmpi_rpc_buf buf = {0};
    int rc = -1;
    if (argc >= 6 && !strcmp(argv[0], "traffic")) {
        struct sdnmpi_job_ref job = job_arg(argv[2]);
        size_t n = (size_t)(argc - 6);
        struct sdnmpi_traffic_pair *pairs = calloc(n + 1, sizeof *pairs);
        if (pairs == NULL)
            return 1;
        for (size_t i = 0; i < n; i++) {
            char src[32], dst[32];
            long long bytes;
            if (sscanf(argv[6 + i], "%31[^,],%31[^,],%lld", src, dst, &bytes) != 3
                || parse_ip(src, &pairs[i].src) || parse_ip(dst, &pairs[i].dst)) {
                fprintf(stderr, "bad pair %s\n", argv[6 + i]);
                free(pairs);
                return 2;
            }
            pairs[i].bytes = bytes;
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
    int out = fwrite(buf.data, 1, buf.len, stdout) == buf.len ? 0 : 1;
    sdnmpi_rpc_buf_free(&buf);
    return out;
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
    printf("{\"valid\": true, \"ok\": %d, \"error\": ", rep.ok);
    json_str(rep.error);
    printf(", \"flows\": %lld, \"node_load\": %lld, \"max_load\": %lld, \"stored\": %d, "
           "\"installed\": %d}\n", (long long)rep.flows, (long long)rep.node_load,
           (long long)rep.plan_max_load, rep.stored, rep.installed);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "read"))
        return cmd_read(argv[2], argv[3], argc - 4, argv + 4);
    if (argc >= 3 && !strcmp(argv[1], "encode"))
        return cmd_encode(argc - 2, argv + 2);
    if (argc == 2 && !strcmp(argv[1], "decode"))
        return cmd_decode();
    fprintf(stderr, "usage: see the comment at the top of traffic_tool.c\n");
    return 2;
}
