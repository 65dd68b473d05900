/*
 * threads.c -- pthreads: a mutex-protected counter and per-thread TLS.
 *
 * Exercises: clone with CLONE_VM|CLONE_THREAD|CLONE_SETTLS|... (through
 * pthread_create; musl maps each thread's stack with mmap and a guard page
 * with mprotect), the thread pointer (set_thread_area on i386, %fs on
 * x86-64), futex wait/wake (mutex, barrier, join), the CLONE_CHILD_CLEARTID
 * wake-up that pthread_join waits for, and exit of single threads.
 *
 * THREADS threads run thread_main -> worker(id).  Each stores its index in
 * the __thread variable tls_id, waits at a barrier until every thread is
 * alive (so all TLS blocks exist at the same time), adds 1 to a shared
 * counter INCREMENTS times under a mutex, checks that tls_id still holds its
 * own index, and returns it.  The main thread keeps its own tls_id value
 * (MAIN_TLS) throughout, joins the threads in index order and prints the
 * results in that order; the counter must be THREADS * INCREMENTS.  Threads
 * only record; the main thread prints after joining, so the output is fixed.
 * A failed check prints a message to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define INCREMENTS 20000
#define MAIN_TLS 100

static __thread int tls_id = -1;

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static pthread_barrier_t all_started;

/* What each thread saw, written only by that thread, read after the join. */
struct thread_result {
    int id;
    int tls_before; /* tls_id as the new thread first sees it: the initial -1 */
    int tls_after;
    int *tls_address; /* compared between threads, never printed */
};

static struct thread_result results[THREADS];

void fail(const char *what, int err)
{
    fprintf(stderr, "threads: %s: %s\n", what, strerror(err));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "threads: check failed: %s\n", what);
        exit(1);
    }
}

void add_to_counter(void)
{
    pthread_mutex_lock(&counter_lock);
    counter++;
    pthread_mutex_unlock(&counter_lock);
}

/* The probe target: one call per thread, with the thread's index. */
int worker(int id)
{
    struct thread_result *r = &results[id];

    r->id = id;
    r->tls_before = tls_id;
    tls_id = id;
    r->tls_address = &tls_id;
    pthread_barrier_wait(&all_started);
    for (int i = 0; i < INCREMENTS; i++)
        add_to_counter();
    r->tls_after = tls_id;
    return tls_id;
}

void *thread_main(void *arg)
{
    return (void *)(intptr_t)worker((int)(intptr_t)arg);
}

int distinct_tls_addresses(void)
{
    for (int i = 0; i < THREADS; i++) {
        if (results[i].tls_address == &tls_id)
            return 0;
        for (int j = i + 1; j < THREADS; j++)
            if (results[i].tls_address == results[j].tls_address)
                return 0;
    }
    return 1;
}

int main(void)
{
    pthread_t tids[THREADS];
    int returned[THREADS];
    int err;

    tls_id = MAIN_TLS;
    if ((err = pthread_barrier_init(&all_started, NULL, THREADS)) != 0)
        fail("pthread_barrier_init", err);
    for (int i = 0; i < THREADS; i++)
        if ((err = pthread_create(&tids[i], NULL, thread_main, (void *)(intptr_t)i)) != 0)
            fail("pthread_create", err);
    for (int i = 0; i < THREADS; i++) {
        void *value;
        if ((err = pthread_join(tids[i], &value)) != 0)
            fail("pthread_join", err);
        returned[i] = (int)(intptr_t)value;
    }
    pthread_barrier_destroy(&all_started);

    for (int i = 0; i < THREADS; i++) {
        struct thread_result *r = &results[i];
        printf("thread %d: worker(%d) returned %d, tls_id %d at start, %d at end\n", i, r->id,
               returned[i], r->tls_before, r->tls_after);
        check(r->id == i && returned[i] == i && r->tls_after == i, "thread kept its own tls_id");
        check(r->tls_before == -1, "a new thread's TLS starts from the initial image");
    }
    printf("tls_id addresses distinct per thread: %s\n", distinct_tls_addresses() ? "yes" : "no");
    check(distinct_tls_addresses(), "every thread has its own TLS block");
    printf("main thread tls_id: %d\n", tls_id);
    check(tls_id == MAIN_TLS, "main thread's tls_id untouched");
    printf("counter: %ld (expected %d)\n", counter, THREADS * INCREMENTS);
    check(counter == THREADS * INCREMENTS, "mutex-protected counter");
    printf("threads: ok\n");
    return 0;
}
