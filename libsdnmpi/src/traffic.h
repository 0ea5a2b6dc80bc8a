/* traffic.h -- traffic-aware job routing, the library side (issue 15): the job's demand from a
 * trace (SDN_MPI_TRAFFIC) at SDN_MPI_Init, the user's flow hints (SDN_MPI_Flow_hint[s]) and the
 * phase hook that tells the controller when a rank enters or leaves a phase (MPI_Pcontrol,
 * SDN_MPI_Phase). The ops are docs/rpc.md's `traffic` and `phase`. */
#ifndef SDNMPI_TRAFFIC_H
#define SDNMPI_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "controller.h"
#include "env.h"
#include "rpc.h"

/* Host pairs per `traffic` request when a phase is sent in parts: the most that always fit a
 * 1 MiB frame (a pair encodes in at most 42 bytes: fixarray, two 15-character IPs, an int64;
 * 1 KiB is left for the map's other keys). */
#define SDNMPI_TRAFFIC_CHUNK_PAIRS ((SDNMPI_RPC_MAX_FRAME - 1024) / 42)

/* Sends a phase's npairs host pairs on c: one `traffic` op if they fit a frame, else several of
 * at most SDNMPI_TRAFFIC_CHUNK_PAIRS pairs, the first with `add` as given and the later ones with
 * add = true (docs/rpc.md: a larger demand goes in parts). *total sums the replies' flows, keeps
 * the last reply's node_load, max_load and stored; *requests = the ops answered ok. Returns the
 * first failing op's SDNMPI_CTRL_* code (why = its reason; the parts before it stay declared).
 * The caller holds whatever lock guards c. */
int sdnmpi_traffic_send_pairs(struct sdnmpi_conn *c, const struct sdnmpi_config *cfg,
                              const struct sdnmpi_job_ref *job, int phase,
                              const struct sdnmpi_traffic_pair *pairs, size_t npairs, int add,
                              struct sdnmpi_rpc_reply *total, size_t *requests, char *why,
                              size_t whylen);

/* Keeps the heavy pairs of a phase: those with at least min_share percent of the heaviest pair's
 * bytes (SDN_MPI_TRAFFIC_MIN_SHARE), in their order. Returns the number kept (at the front). */
size_t sdnmpi_traffic_heavy(struct sdnmpi_traffic_pair *pairs, size_t npairs, int min_share);

/* World rank 0 at SDN_MPI_Init, right after the job registered: reads cfg.traffic (if set) with
 * the ranks' fabric addresses hosts[n] and sends one `traffic` op per phase on its connection.
 * Every failure is one log line; nothing else changes. Call with the state's lock free. */
void sdnmpi_traffic_send_trace(const uint32_t *hosts, int n);

/* The phase hook (phase.h) of this process: sends `phase` on every change while the SDN path is
 * on. Registered by SDN_MPI_Init, removed by SDN_MPI_Finalize. 0 or -1 (no hook slot left). */
int sdnmpi_traffic_hook_add(void);
void sdnmpi_traffic_hook_remove(void);

#endif
