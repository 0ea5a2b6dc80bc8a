/* addr.h -- this rank's fabric IPv4 address (the one the controller knows the host by). */
#ifndef SDNMPI_ADDR_H
#define SDNMPI_ADDR_H

#include <stddef.h>
#include <stdint.h>

#include "env.h"

/* In order: SDN_MPI_FAKE_HOSTS (test only: 10.255.0.(world_rank % N + 1)), SDN_MPI_FABRIC_IP,
 * the first address in SDN_MPI_FABRIC_SUBNET, the first non-loopback IPv4 address of an interface
 * other than the one that reaches the controller (the management network), any non-loopback
 * IPv4 address, 127.0.0.1. Returns the address in network byte order; `how` says which rule
 * picked it. */
uint32_t sdnmpi_fabric_ip(const struct sdnmpi_config *cfg, int world_rank, char *how,
                          size_t howlen);

#endif
