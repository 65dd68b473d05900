/*
 * loss_procs.c -- the process form of the probe-loss experiment's guest
 * (trapline experiment loss --guest processes).
 *
 * Usage: loss_procs [PROCESSES [CALLS]]   (defaults 4 and 200; PROCESSES <= 16)
 *
 * PROCESSES worker processes each call probed() CALLS times. They are made
 * with clone(CLONE_VM | SIGCHLD): no fork, no vfork, no thread. Each worker
 * is a process of its own (its own pid, reaped with waitpid) that shares the
 * parent's memory, and so its code and any probe patched into it, while the
 * parent keeps running. Like the threads of loss_threads, the workers stay
 * runnable and the scheduler's quantum interleaves them; a strategy that
 * restores the original instruction while it single-steps lets the other
 * processes run it unobserved (US 7,350,196, [0004]-[0006]).
 * The workers touch no libc state (they share the parent's thread pointer,
 * hence its errno): each counts its calls in its own slot of shared memory,
 * and the parent prints the total after reaping them all, so the output is:
 *   processes=N calls=N*CALLS
 * A failed check prints a message to stderr and exits 1.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/wait.h>

#define MAX_WORKERS 16
#define STACK_SIZE (64 * 1024)

static long calls_per_worker = 200;
static long slots[MAX_WORKERS];
static char stacks[MAX_WORKERS][STACK_SIZE] __attribute__((aligned(16)));

/* The probe target: one call per loop iteration of every worker. */
long probed(long *slot)
{
    *slot += 1;
    return *slot;
}

int worker(void *arg)
{
    long *slot = arg;
    for (long i = 0; i < calls_per_worker; i++)
        probed(slot);
    return 0;
}

int main(int argc, char **argv)
{
    int workers = argc > 1 ? atoi(argv[1]) : 4;
    int pids[MAX_WORKERS];
    long total = 0;

    if (argc > 2)
        calls_per_worker = atol(argv[2]);
    if (workers < 1 || workers > MAX_WORKERS || calls_per_worker < 0) {
        fprintf(stderr, "usage: loss_procs [PROCESSES (1..%d) [CALLS]]\n", MAX_WORKERS);
        return 2;
    }
    for (int i = 0; i < workers; i++) {
        pids[i] = clone(worker, stacks[i] + STACK_SIZE, CLONE_VM | SIGCHLD, &slots[i]);
        if (pids[i] < 0) {
            fprintf(stderr, "loss_procs: clone: %s\n", strerror(errno));
            return 1;
        }
    }
    for (int i = 0; i < workers; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status)
                || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "loss_procs: worker %d did not exit with 0\n", i);
            return 1;
        }
        total += slots[i];
    }
    printf("processes=%d calls=%ld\n", workers, total);
    if (total != workers * calls_per_worker) {
        fprintf(stderr, "loss_procs: expected %ld calls\n", workers * calls_per_worker);
        return 1;
    }
    return 0;
}
