/* The host clock (emu/host_clock.py): a tick every `period` nanoseconds of the process's CPU
 * time (perf's cpu-clock), which stops the guest run in progress at the next block it begins.
 *
 * Two halves. A thread that runs no Python and never takes the GIL sleeps, reads the process's
 * CPU clock and marks a tick due (it was a Python thread: each wake-up needed the GIL, which the
 * main thread holds between runs, and a sample cost 300-500 us of CPU). And a block hook
 * (UC_HOOK_BLOCK, host_clock_block) on each Machine the clock runs, which stops the run when a
 * tick is due: Unicorn emits the block hook's call ahead of the block's exit-request check
 * (translator.c), so the stop lands on that block's first instruction, before it runs, as the
 * block clock's do (block_clock.c).
 *
 * Why not uc_emu_stop from the thread, as it did: Unicorn 2.1.4 checks the exit request after
 * every guest load and store too (tcg-op.c check_exit_request, there to end a run at an invalid
 * access), and leaves through cpu_loop_exit_restore, which puts the guest back at the start of
 * the instruction: a stop that lands after the store of a read-modify-write instruction (`addl
 * $1, counter`, `xchg`, a locked add) runs it again when the run resumes. callchain under the
 * host clock counted some calls twice, and its depth counter went to -1 and the program
 * crashed; musl's __lockfile faulted. A stop asked from a block hook is taken at the block's
 * start, where no instruction has run.
 *
 * A tick due and not taken is not followed by another: the thread waits until the run loop
 * takes it (host_clock_take wakes it), and counts the next period from there. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*stop_fn)(void *uc);

struct host_clock {
    volatile int due;       /* a tick is due and not taken: first, the block hook's only load */
    int closed;
    int64_t period;         /* ns of process CPU time between ticks */
    int64_t start;          /* process CPU time (ns) when the clock started */
    volatile int64_t fired; /* ticks raised (taken or not) */
    stop_fn stop;           /* uc_emu_stop */
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* close() and take() wake the sleeping thread */
    pthread_t thread;
};

static int64_t cpu_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* Sleep `ns` of wall time (the CPU time it lets pass is at most that per CPU; < 0: until woken),
 * or until close(); called and returns with the lock held. Returns whether the clock is closed. */
static int sleep_locked(struct host_clock *clock, int64_t ns)
{
    struct timespec until;
    if (ns < 0) {
        if (!clock->closed)
            pthread_cond_wait(&clock->wake, &clock->lock);
        return clock->closed;
    }
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ns / 1000000000;
    until.tv_nsec += ns % 1000000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000;
    }
    while (!clock->closed)
        if (pthread_cond_timedwait(&clock->wake, &clock->lock, &until) != 0)
            break;                      /* ETIMEDOUT: the time has come */
    return clock->closed;
}

static void *loop(void *arg)
{
    struct host_clock *clock = arg;
    int64_t last = cpu_ns(), wait = clock->period;
    pthread_mutex_lock(&clock->lock);
    while (!sleep_locked(clock, wait)) {
        if (clock->due) {               /* not taken yet: no other tick until it is */
            wait = -1;
            continue;
        }
        int64_t used = cpu_ns() - last;
        if (used < clock->period) {
            wait = clock->period - used;
            continue;
        }
        last += used;
        clock->fired += 1;
        clock->due = 1;                 /* the next block any Machine begins stops its run */
        wait = -1;
    }
    pthread_mutex_unlock(&clock->lock);
    return NULL;
}

/* UC_HOOK_BLOCK's callback on each Machine the clock runs (user data: the clock). */
void host_clock_block(void *uc, uint64_t address, uint32_t size, struct host_clock *clock)
{
    (void)address;
    (void)size;
    if (clock->due)
        clock->stop(uc);
}

struct host_clock *host_clock_start(int64_t period, stop_fn stop)
{
    struct host_clock *clock = calloc(1, sizeof *clock);
    pthread_condattr_t attributes;
    if (!clock)
        return NULL;
    clock->period = period;
    clock->stop = stop;
    clock->start = cpu_ns();
    pthread_mutex_init(&clock->lock, NULL);
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&clock->wake, &attributes);
    pthread_condattr_destroy(&attributes);
    if (pthread_create(&clock->thread, NULL, loop, clock) != 0) {
        free(clock);
        return NULL;
    }
    return clock;
}

int host_clock_take(struct host_clock *clock)
{
    int due;
    pthread_mutex_lock(&clock->lock);
    due = clock->due;
    clock->due = 0;
    if (due)
        pthread_cond_signal(&clock->wake);  /* the next period begins */
    pthread_mutex_unlock(&clock->lock);
    return due;
}

int64_t host_clock_fired(struct host_clock *clock)
{
    return clock->fired;
}

int64_t host_clock_elapsed(struct host_clock *clock)
{
    return cpu_ns() - clock->start;
}

void host_clock_close(struct host_clock *clock)
{
    pthread_mutex_lock(&clock->lock);
    clock->closed = 1;
    pthread_cond_signal(&clock->wake);
    pthread_mutex_unlock(&clock->lock);
    pthread_join(clock->thread, NULL);
    pthread_cond_destroy(&clock->wake);
    pthread_mutex_destroy(&clock->lock);
    free(clock);
}
