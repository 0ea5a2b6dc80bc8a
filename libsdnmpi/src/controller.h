/*
 * controller.h -- one process's connection to the sdnmpi controller: connect (with the
 * SDN_MPI_TIMEOUT_MS deadline), hello, register, plan_allreduce, plan_bcast, release. Any transport failure,
 * timeout or protocol error closes the connection for good (`dead`): a late reply would otherwise
 * desynchronise the stream, and a dead controller should not cost one timeout per communicator.
 */
#ifndef SDNMPI_CONTROLLER_H
#define SDNMPI_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "env.h"
#include "rpc.h"
#include "schedule.h"

struct sdnmpi_conn {
    int fd;          /* -1 when not connected */
    int dead;        /* a failure closed it; no further attempts */
    int64_t next_id; /* request ids 1, 2, ... */
    char server[64]; /* the controller's hello */
};

/* Results of the request functions. */
enum { SDNMPI_CTRL_OK = 0, SDNMPI_CTRL_REFUSED = 1, SDNMPI_CTRL_FAILED = -1 };

void sdnmpi_conn_init(struct sdnmpi_conn *c);

/* Connects and says hello unless already connected. SDNMPI_CTRL_OK, or SDNMPI_CTRL_FAILED (why
 * says what happened; the connection is then dead). */
int sdnmpi_conn_open(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg, char *why,
                     size_t whylen);

/* The requests need an open connection. SDNMPI_CTRL_OK; SDNMPI_CTRL_REFUSED: the controller
 * answered with an error (why = its reason; the connection stays usable); SDNMPI_CTRL_FAILED: the
 * connection broke or timed out and is now closed and dead. */
/* register: on success *job holds the job's id and token. */
int sdnmpi_conn_register(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                         const uint32_t *hosts, size_t nhosts, struct sdnmpi_job_ref *job,
                         char *why, size_t whylen);
/* locate: locality[i] = the leaf of hosts[i] as the controller knows it (-1: unknown). */
int sdnmpi_conn_locate(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                       const struct sdnmpi_job_ref *job,
                       const uint32_t *hosts, size_t nhosts, int64_t *locality, char *why,
                       size_t whylen);
int sdnmpi_conn_plan(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                     const struct sdnmpi_job_ref *job,
                     int64_t comm_id, const struct sdnmpi_host_steps *steps,
                     struct sdnmpi_rpc_reply *reply, char *why, size_t whylen);
int sdnmpi_conn_plan_bcast(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                           const struct sdnmpi_job_ref *job,
                           int64_t comm_id, uint32_t root, const uint32_t *members,
                           size_t nmembers, struct sdnmpi_rpc_reply *reply, char *why,
                           size_t whylen);
int sdnmpi_conn_release(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                        const struct sdnmpi_job_ref *job,
                        char *why, size_t whylen);

/* Closes the connection (without marking it dead). */
void sdnmpi_conn_close(struct sdnmpi_conn *c);

#endif
