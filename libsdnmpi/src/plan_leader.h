/*
 * plan_leader.h -- what the leader (rank 0) of a communicator asks the controller for, the same in
 * the communicator's first SDN_MPI_Allreduce (plan.c) and in the world's request sent at
 * SDN_MPI_Init (plan_ahead.c): the order of the ranks, leaf by leaf, and the host steps of the
 * plan_allreduce request. Deterministic: the same inputs give the same request.
 */
#ifndef SDNMPI_PLAN_LEADER_H
#define SDNMPI_PLAN_LEADER_H

#include <stdint.h>

#include "schedule.h"

/* MPI_COMM_WORLD's communicator id (docs/rpc.md; plan.h, sdnmpi_plan_next_comm_id_locked). */
#define SDNMPI_WORLD_COMM_ID 0

/* pos[r] = the position of rank r in the algorithms' private communicator. The controller says
 * which leaf each rank's host is on (register's reply, kept by world rank 0, else locate); the
 * ranks are ordered leaf by leaf, then host by host, so that the schedule's nearest partners share
 * a host or a leaf whatever the application's placement. The identity if SDN_MPI_REORDER=0, if
 * locate fails or if a host is unknown to the controller (then *nleaves = 0); else the leaves'
 * first positions in leaf_start (p + 1 entries). Ranks all on one host (a node's
 * MPI_COMM_TYPE_SHARED split) keep their order, and nothing is asked. ips[r], world[r]: rank r's
 * fabric address and world rank. ahead = 1 (SDN_MPI_Init): log nothing and ask nothing; returns -1
 * if locate would be needed (register's reply had no locality), else 0. */
int sdnmpi_plan_leader_order(const uint32_t *ips, const int *world, int p, int ahead, int *pos,
                             int *leaf_start, int *nleaves);

/* The plan request's host steps for ranks on ordered[0..p) (the private communicator's order):
 * recursive doubling's steps, then the hierarchical cross-leaf groups when the leaf layout
 * (leaf_start, nleaves; 0 if unknown) needs routes of their own. SDNMPI_STEPS_* (schedule.h). */
int sdnmpi_plan_leader_steps(const uint32_t *ordered, int p, const int *leaf_start, int nleaves,
                             struct sdnmpi_host_steps *hs);

#endif
