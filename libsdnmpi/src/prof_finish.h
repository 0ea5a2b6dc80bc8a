/* prof_finish.h -- the end of a profiled run (in MPI_Finalize, before PMPI_Finalize). */
#ifndef SDNMPI_PROF_FINISH_H
#define SDNMPI_PROF_FINISH_H

/* Collective over MPI_COMM_WORLD: takes the last counts, derives rx_* from the other ranks' tx_*,
 * writes SDN_MPI_PROF_DIR/oxton-result<rank>.json, and on rank 0 <job>.tar.gz of every rank's file
 * when it can see them all (a shared file system). Warns on stderr about whatever fails. */
void prof_finish(void);

#endif
