/* coll_bench_algs.c -- the --sdn-algs entries: libsdnmpi's allreduce paths (and the hierarchical
 * algorithm's depth or segment) that coll_bench forces through the library's test hooks. */
#include <stddef.h>
#include <string.h>
#include "coll_bench.h"

/* libsdnmpi's test hooks (sdnmpi_testing.h; in the static library coll_bench links): force one
 * allreduce path (1 PMPI_Allreduce, 2 recursive doubling, 3 Rabenseifner, 5 hierarchical, at any
 * size; 0 the library's rule); the last call's path: coll_bench.h. */
int sdnmpi_test_force_allreduce(int path);
/* ... and the hierarchical pipeline's depth (segments in its first step; 0 the library's) and
 * segment bytes (0 the library's). */
int sdnmpi_test_hier_depth(int depth);
int sdnmpi_test_hier_segment(size_t bytes);

/* --sdn-algs entries: the algorithm (path; "pmpi": the library's fallback, PMPI_Allreduce, on
 * sdnmpi's routes) and, for the hierarchical one, a pipeline depth (0:
 * the library's; "hier-dN": N segments in its first step at once) or a segment (0: the
 * library's; "hier-sNk": N KiB segments). */
static const struct alg alg_names[] = {
    {"rd", 2, 0, 0}, {"rabenseifner", 3, 0, 0}, {"hier", 5, 0, 0}, {"pmpi", 1, 0, 0},
    {"hier-d1", 5, 1, 0}, {"hier-d2", 5, 2, 0}, {"hier-d3", 5, 3, 0}, {"hier-d4", 5, 4, 0},
    {"hier-d6", 5, 6, 0}, {"hier-d8", 5, 8, 0}, {"hier-d12", 5, 12, 0}, {"hier-d16", 5, 16, 0},
    {"hier-s4k", 5, 0, 4096}, {"hier-s8k", 5, 0, 8192}, {"hier-s16k", 5, 0, 16384},
    {"hier-s32k", 5, 0, 32768},
};

/* Forces --sdn-algs entry a (an index into alg_names), or the library's rule for a < 0. */
void force_alg(int a)
{
    if (sdnmpi_test_force_allreduce(a < 0 ? 0 : alg_names[a].path)
        || sdnmpi_test_hier_depth(a < 0 ? 0 : alg_names[a].depth)
        || sdnmpi_test_hier_segment(a < 0 ? 0 : alg_names[a].segment))
        die("libsdnmpi refused --sdn-algs entry %s", a < 0 ? "(none)" : alg_names[a].name);
}

const char *alg_name(int path)
{
    for (size_t i = 0; i < sizeof alg_names / sizeof alg_names[0]; i++)
        if (alg_names[i].path == path)
            return alg_names[i].name;
    return "?";
}

int alg_index(const char *name)
{
    for (size_t n = 0; n < sizeof alg_names / sizeof alg_names[0]; n++)
        if (!strcmp(name, alg_names[n].name))
            return (int)n;
    return -1;
}

const struct alg *alg_entry(int a)
{
    return &alg_names[a];
}
