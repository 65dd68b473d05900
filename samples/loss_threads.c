/*
 * loss_threads.c -- the guest of the probe-loss experiment (trapline experiment loss).
 *
 * Usage: loss_threads [THREADS [CALLS]]   (defaults 4 and 200; THREADS <= 16)
 *
 * THREADS pthreads each call probed() CALLS times, with no lock and no
 * blocking between the calls, so that every thread stays runnable and the
 * scheduler's instruction quantum interleaves them as finely as it is set.
 * A probe on probed() must therefore see exactly THREADS * CALLS hits; a
 * strategy that restores the original instruction while it single-steps
 * (US 7,350,196, [0004]-[0006]) lets other threads through unobserved.
 * Each thread counts its own calls in its own slot; the main thread prints
 * the total after joining, so the output is fixed:
 *   threads=N calls=N*CALLS
 * A failed check prints a message to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

static long calls_per_thread = 200;
static long slots[MAX_THREADS];

/* The probe target: one call per loop iteration of every thread. */
long probed(long *slot)
{
    *slot += 1;
    return *slot;
}

void *worker(void *arg)
{
    long *slot = arg;
    for (long i = 0; i < calls_per_thread; i++)
        probed(slot);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    pthread_t tids[MAX_THREADS];
    long total = 0;
    int err;

    if (argc > 2)
        calls_per_thread = atol(argv[2]);
    if (threads < 1 || threads > MAX_THREADS || calls_per_thread < 0) {
        fprintf(stderr, "usage: loss_threads [THREADS (1..%d) [CALLS]]\n", MAX_THREADS);
        return 2;
    }
    for (int i = 0; i < threads; i++)
        if ((err = pthread_create(&tids[i], NULL, worker, &slots[i])) != 0) {
            fprintf(stderr, "loss_threads: pthread_create: %s\n", strerror(err));
            return 1;
        }
    for (int i = 0; i < threads; i++) {
        if ((err = pthread_join(tids[i], NULL)) != 0) {
            fprintf(stderr, "loss_threads: pthread_join: %s\n", strerror(err));
            return 1;
        }
        total += slots[i];
    }
    printf("threads=%d calls=%ld\n", threads, total);
    if (total != threads * calls_per_thread) {
        fprintf(stderr, "loss_threads: expected %ld calls\n", threads * calls_per_thread);
        return 1;
    }
    return 0;
}
