/* phase.h -- the application's phases, as MPI_Pcontrol marks them: one bookkeeping for every part
 * of sdnmpi that cares (the traffic profiler's per-phase matrices, the routing hints of a job).
 *
 * Phase 0 is "no phase" (the whole run is profiled as phase 0 too, by the users of this module).
 * MPI_Pcontrol(k) with 1 <= k <= SDNMPI_PHASE_MAX enters phase k; MPI_Pcontrol(0) goes back to
 * phase 0. Entering the phase one is already in changes nothing. Users register hooks that run
 * on every change, after the current phase has changed, with the phase left and the one entered.
 *
 * Pure C, no MPI: one process's view. Not thread-safe (call it from one thread, as MPI_Pcontrol
 * is normally called).
 */
#ifndef SDNMPI_PHASE_H
#define SDNMPI_PHASE_H

#define SDNMPI_PHASE_MAX 64  /* phases 1..SDNMPI_PHASE_MAX */
#define SDNMPI_PHASE_HOOKS 8 /* hooks registered at once */

typedef void (*sdnmpi_phase_hook_fn)(int from, int to, void *arg);

/* Starts the clock of phase 0 and forgets every phase entered so far (the hooks stay). */
void sdnmpi_phase_reset(void);

/* The current phase (0..SDNMPI_PHASE_MAX). */
int sdnmpi_phase_current(void);

/* MPI_Pcontrol's meaning of `level`: >= 1 enters phase `level`, 0 returns to phase 0. Returns 0,
 * or -1 if level is negative or above SDNMPI_PHASE_MAX (nothing changes then). */
int sdnmpi_phase_set(int level);

/* The highest phase entered since the last reset (0 if none). */
int sdnmpi_phase_highest(void);

/* Seconds spent in phase k (1..SDNMPI_PHASE_MAX) since the last reset, the current stay included;
 * k = 0: seconds since the last reset (the whole run). -1.0 if k is out of range. */
double sdnmpi_phase_seconds(int k);

/* How many times phase k (1..SDNMPI_PHASE_MAX) was entered since the last reset; 0 if out of
 * range. */
long sdnmpi_phase_entries(int k);

/* Registers fn(from, to, arg) to run on every change of phase. 0, or -1 if all
 * SDNMPI_PHASE_HOOKS slots are taken. */
int sdnmpi_phase_add_hook(sdnmpi_phase_hook_fn fn, void *arg);

/* Unregisters a hook registered with the same fn and arg. 0, or -1 if there is none. */
int sdnmpi_phase_remove_hook(sdnmpi_phase_hook_fn fn, void *arg);

#endif
