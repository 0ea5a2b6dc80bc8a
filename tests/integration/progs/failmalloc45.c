/* failmalloc45.c -- an LD_PRELOAD shim that makes one allocation of the program fail (run by
 * tests/unit/test_libsdnmpi_failmalloc45.py on failmalloc_job45.c).
 *
 * It counts the malloc, calloc and realloc calls made from the program's own executable (where
 * libsdnmpi.a is linked in) -- not those of Open MPI, msgpack or libc, which live in shared
 * objects -- from the moment the program calls sdnmpi_failmalloc_start() on. With
 * SDNMPI_FAILMALLOC_AT=N (N >= 1) the N-th of them returns NULL (realloc: leaves its block alone),
 * on world rank SDNMPI_FAILMALLOC_RANK only if that is set (Open MPI's OMPI_COMM_WORLD_RANK).
 * At exit it writes "failmalloc: rank=R allocations=C failed=F" to stderr (F: 1 if it made one
 * fail). The allocations themselves are glibc's (__libc_malloc & co.), so free() needs no shim.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);

static volatile int started;
static long count, fail_at = -1, failed;
static uintptr_t exe_lo, exe_hi; /* the executable's code */

/* The first object dl_iterate_phdr reports is the executable: its executable segments' span. */
static int find_exe(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (exe_lo == 0 || lo < exe_lo)
            exe_lo = lo;
        if (hi > exe_hi)
            exe_hi = hi;
    }
    return 1; /* the first object only */
}

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end = NULL;
    if (v == NULL || v[0] == '\0')
        return dflt;
    long n = strtol(v, &end, 10);
    return *end == '\0' ? n : dflt;
}

void sdnmpi_failmalloc_start(void)
{
    long rank = env_long("SDNMPI_FAILMALLOC_RANK", -1);
    (void)dl_iterate_phdr(find_exe, NULL);
    if (rank < 0 || rank == env_long("OMPI_COMM_WORLD_RANK", -2))
        fail_at = env_long("SDNMPI_FAILMALLOC_AT", -1);
    started = 1;
}

/* Whether this call (from code at `caller`) is the one to fail. */
static int fail_now(void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    if (!started || a < exe_lo || a >= exe_hi)
        return 0;
    if (++count != fail_at)
        return 0;
    failed = 1;
    return 1;
}

void *malloc(size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *ptr, size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(ptr, size);
}

__attribute__((destructor)) static void report(void)
{
    char line[128];
    int n = snprintf(line, sizeof line, "failmalloc: rank=%ld allocations=%ld failed=%ld\n",
                     env_long("OMPI_COMM_WORLD_RANK", -1), count, failed);
    if (started && n > 0 && (size_t)n < sizeof line && write(2, line, (size_t)n) < 0)
        _exit(3);
}
