/* prof_out.h -- the profiler's files: one rank's oxton-result<rank>.json (prof_json.c) and the
 * job's <job>.tar.gz (prof_tar.c). Both write to "<path>.tmp" and rename, so a reader never sees a
 * half-written file. */
#ifndef SDNMPI_PROF_OUT_H
#define SDNMPI_PROF_OUT_H

#include <stddef.h>
#include <stdint.h>

struct prof_size_freq {
    uint64_t size;
    uint64_t freq;
};

/* One phase's rows (n values each). */
struct prof_out_phase {
    const uint64_t *tx_bytes, *tx_msgs, *rx_bytes, *rx_msgs;
    double duration;
    uint64_t events;
};

struct prof_out {
    int rank, n_procs;
    const char *processor_name;
    const char *source;                 /* "mpi_t" or "pmpi" */
    double duration;
    int n_phases;                       /* phase[0] = the whole run */
    const struct prof_out_phase *phase;
    const struct prof_size_freq *tx_sizes, *rx_sizes; /* sorted by size */
    size_t n_tx_sizes, n_rx_sizes;
};

/* Writes `out` as PFProf's JSON (keys sorted, 4-space indent) plus phases[], n_phases, source and
 * duration. 0, or -1 with errno set. */
int prof_json_write(const char *path, const struct prof_out *out);

/* Writes a gzip'd ustar archive `path` holding the files dir/names[i] as flat members names[i].
 * 0, or -1 with errno set. */
int prof_tar_write(const char *path, const char *dir, const char *const *names, int n);

#endif
