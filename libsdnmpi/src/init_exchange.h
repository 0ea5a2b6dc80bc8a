/* init_exchange.h -- SDN_MPI_Init's messages on MPI_COMM_WORLD (init.c): two collectives, the
 * floor's (bench/README.md, "The floor"). First a Gather to world rank 0 of every rank's fabric
 * address and whether it has its memory (rank 0 must know every host before it registers), then,
 * once rank 0 has registered, a Bcast of its agreement with every rank's address (the outcome can
 * only leave rank 0 after the controller's reply; every rank keeps every rank's address).
 *
 * A rank that cannot allocate its table still takes part, through a bounded spare buffer (touched
 * only then); rank 0 learns it from the Gather and turns the SDN path off for everyone. A job
 * larger than that buffer agrees on its memory first, with an Allreduce: one collective more. */
#ifndef SDNMPI_INIT_EXCHANGE_H
#define SDNMPI_INIT_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

/* Largest world for two collectives (the spare buffer holds two words a rank: 32 KiB). */
#define SDNMPI_INIT_SPARE_RANKS 4096

struct sdnmpi_init_exchange {
    uint32_t *ips; /* every rank's fabric address, world rank order (malloc'd; NULL: no memory);
                      filled on rank 0 by the Gather (unless nomem), on the others by the Bcast */
    int nomem;     /* rank 0: some rank (itself included) has no memory, after the Gather;
                      any rank: it has none itself */
    int carry;     /* the Bcast carries the addresses (the same on every rank) */
};

/* Every rank, Init's first collective (after an Allreduce when size > SDNMPI_INIT_SPARE_RANKS):
 * allocates x->ips and sends `ip` with whether it could; rank 0 receives every rank's. MPI error
 * code (x->ips is then the caller's to free). */
int sdnmpi_init_gather(int rank, int size, uint32_t ip, struct sdnmpi_init_exchange *x);

/* Every rank, Init's last collective: world rank 0's `bytes` at `agreement` and, if x->carry, the
 * addresses from its x->ips into every rank's (a rank without them receives into the spare buffer
 * and keeps nothing). One Bcast. MPI error code. */
int sdnmpi_init_bcast(void *agreement, size_t bytes, int size, struct sdnmpi_init_exchange *x);

#endif
