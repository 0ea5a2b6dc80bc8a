/* chain.c -- see chain.h. Compiled into each preload library, so RTLD_NEXT is relative to it. */
#include "chain.h"

#include <dlfcn.h>

void *sdnmpi_chain_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}
