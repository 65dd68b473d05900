/* The host clock's thread (emu/host_clock.py): a tick every `period` nanoseconds of the
 * process's CPU time (perf's cpu-clock), which stops the guest run in progress.
 *
 * Why C: the clock was a Python thread. Each of its wake-ups needs the GIL, which the main
 * thread holds whenever it is not inside uc_emu_start: the two threads handed the GIL to each
 * other around every tick (and the main thread's ctypes calls, which release and retake it,
 * waited for the clock's Python), so a sample cost 300-500 us of CPU (bench/profile.py). This
 * thread runs no Python and never takes the GIL: it sleeps, reads the process's CPU clock,
 * marks a tick due and calls uc_emu_stop on the Unicorn instance the run loop said is inside
 * uc_emu_start (documented as callable from another thread: it sets the CPU's exit request,
 * checked at every translated block).
 *
 * A stop asked just before a run begins is cleared by uc_emu_start (uc.c: `uc->stop_request =
 * false`), so while a tick is due and not taken the thread asks again every `retry` ns, while a
 * run is under way; between runs (the kernel model's work) it sleeps until the next run begins
 * or the tick is taken (`running` and `take` wake it), where it woke every `retry` ns. The
 * lock makes `running`/`idle` and the stop one at a time: the thread never stops an instance
 * the run loop has already left (which may then be closed). Each wake-up costs the process CPU (the kernel's timer and scheduler work, charged to this
 * thread: bench/profile.py shows it). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*stop_fn)(void *uc);

struct host_clock {
    int64_t period;         /* ns of process CPU time between ticks */
    int64_t retry;          /* ns between stops of a run while a tick is due and not taken */
    int64_t start;          /* process CPU time (ns) when the clock started */
    volatile int64_t fired; /* ticks raised (taken or not) */
    volatile int due;       /* a tick is due and not taken */
    int closed;
    void *running;          /* the uc inside uc_emu_start, or NULL */
    stop_fn stop;
    pthread_mutex_t lock;
    pthread_cond_t wake;    /* close() wakes the sleeping thread */
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
        if (clock->due) {               /* not taken yet: the run may have missed the stop */
            if (clock->running) {
                clock->stop(clock->running);
                wait = clock->retry;
            } else {
                wait = -1;              /* until a run begins (host_clock_running) */
            }
            continue;
        }
        int64_t used = cpu_ns() - last;
        if (used < clock->period) {
            wait = clock->period - used;
            continue;
        }
        last += used;
        clock->fired += 1;
        clock->due = 1;
        if (clock->running)
            clock->stop(clock->running);
        wait = clock->period;
    }
    pthread_mutex_unlock(&clock->lock);
    return NULL;
}

struct host_clock *host_clock_start(int64_t period, int64_t retry, stop_fn stop)
{
    struct host_clock *clock = calloc(1, sizeof *clock);
    pthread_condattr_t attributes;
    if (!clock)
        return NULL;
    clock->period = period;
    clock->retry = retry;
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

void host_clock_running(struct host_clock *clock, void *uc)
{
    pthread_mutex_lock(&clock->lock);
    clock->running = uc;
    if (uc && clock->due)
        pthread_cond_signal(&clock->wake);  /* a tick waits for this run: stop it */
    pthread_mutex_unlock(&clock->lock);
}

int host_clock_take(struct host_clock *clock)
{
    int due;
    pthread_mutex_lock(&clock->lock);
    due = clock->due;
    clock->due = 0;
    if (due && !clock->running)
        pthread_cond_signal(&clock->wake);  /* it may wait for a run: the next period begins */
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
