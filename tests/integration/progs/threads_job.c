/* threads_job.c -- two threads, each calling SDN_MPI_Allreduce ROUNDS times on its own dup of
 * MPI_COMM_WORLD, under MPI_THREAD_MULTIPLE (test_libsdnmpi_threads.py). With "stagger", the even
 * world ranks delay thread 1 and the odd ones thread 0 before each call, so the two communicators'
 * calls interleave in another order on each rank, which MPI allows. Every result is checked; the
 * last line of each rank is "threads_job: rank R ok" or "... wrong N". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sdnmpi.h"

#define ROUNDS 24
#define COUNT 4096
#define STAGGER_NS 20000000L /* 20 ms */

static MPI_Comm comms[2];
static int wrong[2];
static int stagger, world_rank;

static void *run(void *arg)
{
    const int t = (int)(long)arg;
    int rank = -1, p = 0;
    if (MPI_Comm_rank(comms[t], &rank) != MPI_SUCCESS || MPI_Comm_size(comms[t], &p) != MPI_SUCCESS) {
        wrong[t]++;
        return NULL;
    }
    const int late = stagger && t == (world_rank % 2 == 0 ? 1 : 0);
    const struct timespec nap = {0, STAGGER_NS};
    int *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    if (in == NULL || out == NULL) {
        wrong[t]++;
        free(in);
        free(out);
        return NULL;
    }
    for (int round = 0; round < ROUNDS; round++) {
        if (late && nanosleep(&nap, NULL) != 0)
            wrong[t]++;
        for (int i = 0; i < COUNT; i++)
            in[i] = rank + i + round + t;
        if (SDN_MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, comms[t]) != MPI_SUCCESS)
            wrong[t]++;
        for (int i = 0; i < COUNT; i++)
            if (out[i] != p * (i + round + t) + p * (p - 1) / 2) {
                wrong[t]++;
                break;
            }
    }
    free(in);
    free(out);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, x = 1, y = 0;
    stagger = argc > 1 && strcmp(argv[1], "stagger") == 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("threads_job: no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (SDN_MPI_Init() != MPI_SUCCESS || MPI_Comm_rank(MPI_COMM_WORLD, &world_rank) != MPI_SUCCESS
        || MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]) != MPI_SUCCESS
        || MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]) != MPI_SUCCESS
        /* both plans first, in one order on every rank */
        || SDN_MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[0]) != MPI_SUCCESS
        || SDN_MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[1]) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 3);
    pthread_t th[2];
    for (long t = 0; t < 2; t++)
        if (pthread_create(&th[t], NULL, run, (void *)t) != 0)
            MPI_Abort(MPI_COMM_WORLD, 4);
    for (int t = 0; t < 2; t++)
        if (pthread_join(th[t], NULL) != 0)
            MPI_Abort(MPI_COMM_WORLD, 5);
    if (wrong[0] + wrong[1] == 0)
        printf("threads_job: rank %d ok\n", world_rank);
    else
        printf("threads_job: rank %d wrong %d\n", world_rank, wrong[0] + wrong[1]);
    if (fflush(stdout) != 0 || MPI_Comm_free(&comms[0]) != MPI_SUCCESS
        || MPI_Comm_free(&comms[1]) != MPI_SUCCESS || SDN_MPI_Finalize() != MPI_SUCCESS)
        return 1;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
