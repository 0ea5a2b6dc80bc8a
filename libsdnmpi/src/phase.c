/* phase.c -- see phase.h. */
#include "phase.h"

#include <stddef.h>
#include <time.h>

struct hook {
    sdnmpi_phase_hook_fn fn;
    void *arg;
};

static struct {
    int current;
    int highest;
    double start;                           /* monotonic seconds at the last reset */
    double entered;                         /* when the current phase was entered */
    double seconds[SDNMPI_PHASE_MAX + 1];   /* finished stays per phase */
    long entries[SDNMPI_PHASE_MAX + 1];
    struct hook hooks[SDNMPI_PHASE_HOOKS];
} ph;

static double now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0; /* CLOCK_MONOTONIC exists on every Linux; a zero clock only zeroes durations */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sdnmpi_phase_reset(void)
{
    ph.current = 0;
    ph.highest = 0;
    ph.start = now();
    ph.entered = ph.start;
    for (int k = 0; k <= SDNMPI_PHASE_MAX; k++) {
        ph.seconds[k] = 0.0;
        ph.entries[k] = 0;
    }
}

int sdnmpi_phase_current(void)
{
    return ph.current;
}

int sdnmpi_phase_set(int level)
{
    if (level < 0 || level > SDNMPI_PHASE_MAX)
        return -1;
    int from = ph.current;
    if (level == from)
        return 0;
    double t = now();
    ph.seconds[from] += t - ph.entered;
    ph.entered = t;
    ph.current = level;
    if (level > 0) {
        ph.entries[level]++;
        if (level > ph.highest)
            ph.highest = level;
    }
    for (int i = 0; i < SDNMPI_PHASE_HOOKS; i++)
        if (ph.hooks[i].fn != NULL)
            ph.hooks[i].fn(from, level, ph.hooks[i].arg);
    return 0;
}

int sdnmpi_phase_highest(void)
{
    return ph.highest;
}

double sdnmpi_phase_seconds(int k)
{
    if (k < 0 || k > SDNMPI_PHASE_MAX)
        return -1.0;
    double t = now();
    if (k == 0)
        return t - ph.start;
    return ph.seconds[k] + (k == ph.current ? t - ph.entered : 0.0);
}

long sdnmpi_phase_entries(int k)
{
    return k >= 1 && k <= SDNMPI_PHASE_MAX ? ph.entries[k] : 0;
}

int sdnmpi_phase_add_hook(sdnmpi_phase_hook_fn fn, void *arg)
{
    for (int i = 0; i < SDNMPI_PHASE_HOOKS; i++) {
        if (ph.hooks[i].fn == NULL) {
            ph.hooks[i].fn = fn;
            ph.hooks[i].arg = arg;
            return 0;
        }
    }
    return -1;
}

int sdnmpi_phase_remove_hook(sdnmpi_phase_hook_fn fn, void *arg)
{
    for (int i = 0; i < SDNMPI_PHASE_HOOKS; i++) {
        if (ph.hooks[i].fn == fn && ph.hooks[i].arg == arg) {
            ph.hooks[i].fn = NULL;
            ph.hooks[i].arg = NULL;
            return 0;
        }
    }
    return -1;
}
