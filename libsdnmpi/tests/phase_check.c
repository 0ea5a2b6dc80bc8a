/* phase_check.c -- phase.c's contract (phase.h), without MPI. Prints "phase_check: ok" or the first
 * broken expectation (exit 1). Run by tests/unit/test_profiler.py. */
#include <stdio.h>
#include <stdlib.h>

#include "phase.h"

static int calls, last_from, last_to;

static void hook(int from, int to, void *arg)
{
    calls++;
    last_from = from;
    last_to = to;
    if (sdnmpi_phase_current() != to || arg != &calls) {
        printf("phase_check: the hook ran before the change or with the wrong argument\n");
        exit(1);
    }
}

static void noop(int from, int to, void *arg)
{
    (void)from;
    (void)to;
    (void)arg;
}

#define EXPECT(cond)                                                                                      \
    do {                                                                                                  \
        if (!(cond)) {                                                                                    \
            printf("phase_check: line %d: %s\n", __LINE__, #cond);                                        \
            return 1;                                                                                     \
        }                                                                                                 \
    } while (0)

int main(void)
{
    sdnmpi_phase_reset();
    EXPECT(sdnmpi_phase_current() == 0 && sdnmpi_phase_highest() == 0);
    EXPECT(sdnmpi_phase_add_hook(hook, &calls) == 0);
    EXPECT(sdnmpi_phase_set(2) == 0 && calls == 1 && last_from == 0 && last_to == 2);
    EXPECT(sdnmpi_phase_set(2) == 0 && calls == 1);            /* no change, no call */
    EXPECT(sdnmpi_phase_set(1) == 0 && calls == 2 && last_from == 2 && last_to == 1);
    EXPECT(sdnmpi_phase_set(-1) == -1 && sdnmpi_phase_set(SDNMPI_PHASE_MAX + 1) == -1);
    EXPECT(sdnmpi_phase_current() == 1 && calls == 2);
    EXPECT(sdnmpi_phase_set(SDNMPI_PHASE_MAX) == 0 && sdnmpi_phase_highest() == SDNMPI_PHASE_MAX);
    EXPECT(sdnmpi_phase_set(0) == 0 && calls == 4 && last_to == 0);
    EXPECT(sdnmpi_phase_set(2) == 0 && sdnmpi_phase_entries(2) == 2 && sdnmpi_phase_entries(1) == 1);
    EXPECT(sdnmpi_phase_entries(0) == 0 && sdnmpi_phase_entries(SDNMPI_PHASE_MAX + 1) == 0);
    double total = sdnmpi_phase_seconds(0), two = sdnmpi_phase_seconds(2), one = sdnmpi_phase_seconds(1);
    EXPECT(total >= 0 && two >= 0 && one >= 0 && two + one <= sdnmpi_phase_seconds(0));
    EXPECT(sdnmpi_phase_seconds(-1) == -1.0 && sdnmpi_phase_seconds(3) == 0.0);
    EXPECT(sdnmpi_phase_remove_hook(hook, &calls) == 0 && sdnmpi_phase_remove_hook(hook, &calls) == -1);
    EXPECT(sdnmpi_phase_set(1) == 0 && calls == 5);             /* removed: not called */
    for (int i = 0; i < SDNMPI_PHASE_HOOKS; i++)
        EXPECT(sdnmpi_phase_add_hook(noop, NULL) == 0);
    EXPECT(sdnmpi_phase_add_hook(noop, NULL) == -1);          /* full */
    sdnmpi_phase_reset();                                      /* forgets phases, keeps hooks */
    EXPECT(sdnmpi_phase_current() == 0 && sdnmpi_phase_highest() == 0 && sdnmpi_phase_entries(2) == 0);
    EXPECT(sdnmpi_phase_remove_hook(noop, NULL) == 0);
    printf("phase_check: ok\n");
    return 0;
}
