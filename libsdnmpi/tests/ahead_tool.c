/*
 * ahead_tool.c -- the controller connection's requests sent ahead (controller.h), for
 * tests/unit/test_libsdnmpi_planahead_conn.py. No MPI_Init.
 *
 *   ahead_tool OP...     (SDN_MPI_CONTROLLER: a stub; the job is registered first)
 *
 * OP is one of: sN (send plan_allreduce ahead for communicator N, 1 <= N <= 15, for the ranks on
 * 2^min(N, 6) hosts 10.254.0.1..: distinct replies up to N = 6), aN (abandon communicator N's
 * request), cN (collect its reply), r (release: an ordinary exchange), x (sdnmpi_conn_alive).
 * Prints one line per OP: "sN ok|refused|failed", "cN ok flows=F" or "cN refused|failed: WHY",
 * "r ok|...", "x 0|1", "aN". Exit 2 on bad usage.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller.h"
#include "env.h"
#include "schedule.h"

#define MAX_COMMS 16

static const char *result(int rc)
{
    return rc == SDNMPI_CTRL_OK ? "ok" : rc == SDNMPI_CTRL_REFUSED ? "refused" : "failed";
}

/* 0, or -1 (bad OP). */
static int run_op(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                  const struct sdnmpi_job_ref *job, const char *op, int64_t *req)
{
    char why[256] = "";
    char *end = NULL;
    long n = op[0] != '\0' && op[1] != '\0' ? strtol(op + 1, &end, 10) : -1;
    int indexed = end != NULL && *end == '\0' && n >= 1 && n < MAX_COMMS;
    if (op[0] == 's' && indexed) {
        uint32_t ips[256];
        struct sdnmpi_host_steps hs;
        int p = 1 << (n < 6 ? n : 6);
        for (int i = 0; i < p; i++)
            ips[i] = htonl(0x0afe0000u | (uint32_t)(i + 1));
        if (sdnmpi_host_steps_build(p, ips, SDNMPI_RPC_MAX_PAIRS, &hs) != SDNMPI_STEPS_OK)
            return -1;
        int rc = sdnmpi_conn_plan_send(c, cfg, job, n, &hs, &req[n], why, sizeof why);
        sdnmpi_host_steps_free(&hs);
        printf("s%ld %s\n", n, result(rc));
    } else if (op[0] == 'a' && indexed) {
        sdnmpi_conn_plan_abandon(c, req[n]);
        printf("a%ld\n", n);
    } else if (op[0] == 'c' && indexed) {
        struct sdnmpi_rpc_reply reply = {0};
        int rc = sdnmpi_conn_plan_collect(c, cfg, req[n], &reply, why, sizeof why);
        if (rc == SDNMPI_CTRL_OK)
            printf("c%ld ok flows=%lld\n", n, (long long)reply.flows);
        else
            printf("c%ld %s: %s\n", n, result(rc), why);
    } else if (strcmp(op, "r") == 0) {
        printf("r %s\n", result(sdnmpi_conn_release(c, cfg, job, why, sizeof why)));
    } else if (strcmp(op, "x") == 0) {
        printf("x %d\n", sdnmpi_conn_alive(c));
    } else {
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct sdnmpi_config cfg;
    struct sdnmpi_conn c;
    struct sdnmpi_job_ref job;
    int64_t req[MAX_COMMS] = {0};
    uint32_t host = htonl(0x0afe0001u);
    char why[256] = "";
    sdnmpi_env_load(&cfg);
    sdnmpi_conn_init(&c);
    int rc = sdnmpi_conn_open(&c, &cfg, why, sizeof why);
    if (rc == SDNMPI_CTRL_OK)
        rc = sdnmpi_conn_register(&c, &cfg, &host, 1, &job, NULL, why, sizeof why);
    if (rc != SDNMPI_CTRL_OK) {
        printf("register %s: %s\n", result(rc), why);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (run_op(&c, &cfg, &job, argv[i], req) != 0) {
            fprintf(stderr, "ahead_tool: bad op %s\n", argv[i]);
            sdnmpi_conn_close(&c);
            return 2;
        }
        if (fflush(stdout) != 0)
            return 1;
    }
    sdnmpi_conn_close(&c);
    return 0;
}
