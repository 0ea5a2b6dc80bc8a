/* traffic.h -- traffic-aware job routing, the library side (issue 15): the job's demand from a
 * trace (SDN_MPI_TRAFFIC) at SDN_MPI_Init, the user's flow hints (SDN_MPI_Flow_hint[s]) and the
 * phase hook that tells the controller when a rank enters or leaves a phase (MPI_Pcontrol,
 * SDN_MPI_Phase). The ops are docs/rpc.md's `traffic` and `phase`. */
#ifndef SDNMPI_TRAFFIC_H
#define SDNMPI_TRAFFIC_H

#include <stdint.h>

/* World rank 0 at SDN_MPI_Init, right after the job registered: reads cfg.traffic (if set) with
 * the ranks' fabric addresses hosts[n] and sends one `traffic` op per phase on its connection.
 * Every failure is one log line; nothing else changes. Call with the state's lock free. */
void sdnmpi_traffic_send_trace(const uint32_t *hosts, int n);

/* The phase hook (phase.h) of this process: sends `phase` on every change while the SDN path is
 * on. Registered by SDN_MPI_Init, removed by SDN_MPI_Finalize. 0 or -1 (no hook slot left). */
int sdnmpi_traffic_hook_add(void);
void sdnmpi_traffic_hook_remove(void);

#endif
