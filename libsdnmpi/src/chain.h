/* chain.h -- calling the next definition of an MPI function. libsdnmpi-preload.so and the profiler
 * (libsdnmpi_prof.so) both define MPI_Init, MPI_Init_thread, MPI_Pcontrol and MPI_Finalize. When
 * both are preloaded, the dynamic linker binds the application's calls to the first library's
 * definitions only; so each library's wrapper does its own work and then calls the NEXT definition
 * in the lookup order (dlsym(RTLD_NEXT, name): the other library's, or finally the MPI library's),
 * never PMPI_* directly. Then both see every call, in either LD_PRELOAD order. */
#ifndef SDNMPI_CHAIN_H
#define SDNMPI_CHAIN_H

/* The next definition of `name` after the calling shared object, or NULL if there is none. */
void *sdnmpi_chain_next(const char *name);

#endif
