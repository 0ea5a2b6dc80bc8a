/* trace_read.h -- a job's demand from a trace of an earlier run (the profiler's or PFProf's
 * oxton-result<rank>.json files, docs/profiler.md): per phase, the host pairs and their bytes.
 *
 * Rank pairs are folded into host pairs with the job's rank -> host addresses. PFSim's rule: rank
 * i's bytes to j count only where tx_messages[j] > 0; pairs of ranks on one host add nothing;
 * host pairs with 0 bytes are left out. A trace without phases (no phases[], or phase 0 only)
 * gives phase 0 (the whole run); with phases 1..K it gives those, and not phase 0. Pairs are
 * ordered heaviest first (ties: source, then destination host in the ranks' order).
 */
#ifndef SDNMPI_TRACE_READ_H
#define SDNMPI_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "rpc.h"

struct sdnmpi_trace_phase {
    int phase;                          /* 0..SDNMPI_RPC_MAX_PHASE */
    struct sdnmpi_traffic_pair *pairs;  /* npairs entries (NULL if none) */
    size_t npairs;                      /* 0: no traffic between hosts in this phase */
};

struct sdnmpi_trace_demand {
    int nphases;                        /* entries of phase[] used */
    struct sdnmpi_trace_phase phase[SDNMPI_RPC_MAX_PHASE + 1];
};

/* Reads the trace at path (see trace_files.h) for a job of n ranks on rank_ip[n] (network byte
 * order). 0, or -1 with a one-line reason in why (missing or unreadable, malformed, a rank count
 * other than n, a rank file missing or twice, a file above max_bytes, more phases than
 * SDNMPI_RPC_MAX_PHASE, more host pairs in a phase than SDNMPI_RPC_MAX_TRAFFIC_PAIRS, no memory).
 * On success free *out with sdnmpi_trace_demand_free. */
int sdnmpi_trace_read(const char *path, const uint32_t *rank_ip, int n, uint64_t max_bytes,
                      struct sdnmpi_trace_demand *out, char *why, size_t whylen);
void sdnmpi_trace_demand_free(struct sdnmpi_trace_demand *d);

#endif
