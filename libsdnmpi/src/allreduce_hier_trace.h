/* allreduce_hier_trace.h -- an opt-in trace of the hierarchical allreduce's pipeline
 * (SDN_MPI_HIER_TRACE=DIR): for every segment and step of a call, when it was posted and when the
 * rank saw it complete (CLOCK_MONOTONIC, one clock for every rank of the machine), and the
 * elements it sent and received; per call the rank's CPU time and context switches. Each rank
 * appends to DIR/hier-<rank>-<pid>.txt when the call ends (the write is part of the call: a
 * traced run's times include it). bench/hier_trace.py reads the files.
 * Off (DIR unset) it costs one branch per step. */
#ifndef SDNMPI_ALLREDUCE_HIER_TRACE_H
#define SDNMPI_ALLREDUCE_HIER_TRACE_H

struct sdnmpi_hier_trace;

/* A trace of one call, or NULL if dir is NULL or empty (tracing off) or memory is short. */
struct sdnmpi_hier_trace *sdnmpi_hier_trace_begin(const char *dir, int nseg, int nsteps);

/* Segment seg's step `step` was posted (send_n elements to rank `to`, recv_n from `from`; peers
 * may be MPI_PROC_NULL) / was seen complete. NULL: no-op. */
void sdnmpi_hier_trace_post(struct sdnmpi_hier_trace *t, int seg, int step, int send_n, int recv_n,
                            int to, int from);
void sdnmpi_hier_trace_done(struct sdnmpi_hier_trace *t, int seg, int step);

/* Writes the call's record (rank, p, the layout's leaves and lanes, count, extent, the pipeline's
 * depth) and frees t. NULL: no-op. */
void sdnmpi_hier_trace_end(struct sdnmpi_hier_trace *t, int rank, int p, int nleaves, int lanes,
                           int count, long extent, int depth);

#endif
