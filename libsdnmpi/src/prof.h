/* prof.h -- the traffic profiler (libsdnmpi_prof.so): what its translation units share.
 *
 *   prof_state.c     the one state object (prof_g) and prof_warn; uses no other prof_*.c unit
 *   prof_init.c      MPI_Init*, MPI_Pcontrol, MPI_Finalize wrappers; start, phases, stop
 *   prof_counts.c    the per-phase matrices and the (peer, size) message histogram
 *   prof_map.c       communicator ranks -> MPI_COMM_WORLD ranks (cached per communicator)
 *   prof_mpit.c      the "mpi_t" source: Open MPI's pml_monitoring performance variables
 *   prof_p2p.c       point-to-point wrappers
 *   prof_coll.c      collective wrappers (the "pmpi" source attributes them with prof_model_*)
 *   prof_icoll.c     nonblocking collective wrappers (likewise)
 *   prof_model.c     one standard collective algorithm per function: the pairs it sends to
 *   prof_finish.c    the end: rx from the senders, the rank file, the archive
 *   prof_json.c      writing oxton-result<rank>.json
 *   prof_tar.c       writing <job>.tar.gz
 * See docs/profiler.md.
 */
#ifndef SDNMPI_PROF_H
#define SDNMPI_PROF_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "phase.h"

enum prof_source {
    PROF_SOURCE_PMPI = 0, /* matrices from the PMPI wrappers (collectives by their model) */
    PROF_SOURCE_MPIT = 1, /* matrices from pml_monitoring's MPI_T performance variables */
};

/* One phase's counts: what this rank sent to each world rank. */
struct prof_phase {
    uint64_t *tx_bytes; /* [n], NULL until the phase is first used */
    uint64_t *tx_msgs;  /* [n] */
    uint64_t events;    /* MPI calls intercepted in this phase */
};

/* (peer, size) -> messages: the message-size histogram, with the peer for the rx exchange. */
struct prof_hist_entry {
    int32_t peer; /* world rank; -1 = empty slot */
    uint64_t size;
    uint64_t freq;
};

struct prof_hist {
    struct prof_hist_entry *slots;
    size_t cap;  /* a power of two */
    size_t used;
};

struct prof_state {
    int active;      /* between the start (after MPI_Init) and the stop (in MPI_Finalize) */
    int failed;      /* out of memory while counting: the output says nothing, a warning said why */
    int rank, size;  /* in MPI_COMM_WORLD */
    int source;      /* enum prof_source */
    double t_start;  /* MPI_Wtime at the start */
    struct prof_phase phase[SDNMPI_PHASE_MAX + 1]; /* [0] = the whole run */
    struct prof_hist hist;
};

extern struct prof_state prof_g;

/* prof_state.c: the one state object (prof_g, declared above) and a warning line on stderr
 * ("sdnmpi-prof[rank]: ..."). */
void prof_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* prof_counts.c */
int prof_counts_init(int n);           /* 0, or -1 out of memory */
void prof_counts_free(void);
struct prof_phase *prof_phase_get(int k); /* allocated on first use; NULL (and failed) if no memory */
/* One message of `bytes` to world rank `peer` (ignored if out of range): the histogram always,
 * the matrices of phase 0 and the current phase with the pmpi source. */
void prof_count_send(int peer, uint64_t bytes);
/* An intercepted MPI call (phase 0 and the current phase). */
void prof_count_event(void);
/* Adds bytes[n] / msgs[n] to phase k's matrices (the mpi_t source). 0 or -1 (no memory). */
int prof_counts_add(int k, const uint64_t *bytes, const uint64_t *msgs);

/* prof_map.c */
int prof_map_init(void);               /* MPI_SUCCESS or an MPI error code */
void prof_map_free(void);
/* The world rank of `rank` of comm's remote group (= its group for intracommunicators); -1 for
 * MPI_PROC_NULL, MPI_ANY_SOURCE, out of range, or an error. */
int prof_world_rank(MPI_Comm comm, int rank);
/* Sends `bytes` to `rank` of comm (prof_count_send after translation). */
void prof_send(MPI_Comm comm, int rank, uint64_t bytes);
/* The world ranks of an intracommunicator's group (*world[0..*n)) and this process's rank in it.
 * -1 for intercommunicators or on error (nothing to model then). */
int prof_comm_ranks(MPI_Comm comm, const int **world, int *n, int *me);

/* prof_mpit.c */
/* Opens the pml_monitoring performance variables on MPI_COMM_WORLD. 0 when the mpi_t source is
 * usable, -1 otherwise (nothing to close). */
int prof_mpit_open(int n);
/* Takes the first sample: counting starts here. 0 or -1. */
int prof_mpit_begin(void);
/* Closes without counting (another rank cannot use the mpi_t source). */
void prof_mpit_abandon(void);
/* Samples the counters; adds what was sent since the previous sample to phase `k` (k >= 1), or
 * drops it (k == 0: phase 0's total comes from prof_mpit_close). 0 or -1. */
int prof_mpit_sample(int k);
/* The last sample: adds the run's totals to phase 0 and the rest to phase `k`, frees. 0 or -1. */
int prof_mpit_close(int k);

/* Size in bytes of count elements of type, 0 on error. */
uint64_t prof_bytes(int count, MPI_Datatype type);

#endif
