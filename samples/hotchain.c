/*
 * hotchain.c -- a hot leaf under a call chain, in threads, with longjmp and page faults
 * (issue 18: the walk-up's entry/exit pairs must survive threads, recursion and longjmp;
 * the profiler's page-fault event needs faults).
 *
 * Structure (all counts fixed; the program prints them, so a tool's counts can be checked):
 *   main -> (THREADS pthreads and main itself) -> crunch(id)
 *   crunch -> level3 (ROUNDS) -> level2 (2 each) -> level1 (3 each) -> hot (2 each)
 *   level1 -> dig(depth) recursing to depth 3 -> hot once more
 *   every 7th level2 call longjmps out of level1 (after its calls) back to crunch's setjmp,
 *   abandoning the level1 and level2 frames on the way;
 *   faults(): FAULTS writes to a page made PROT_NONE each time, each one a SIGSEGV whose
 *   handler makes the page writable again, so the write is retried and succeeds.
 * hot() runs HOT_STEPS rounds of a 32-bit LCG (both arches agree): it is the hot spot.
 *
 * Usage: hotchain [ROUNDS] [FAULTS]   (defaults 30 and 50)
 * Output: one line of the counts and the checksum, the same on both arches.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define THREADS 2
#define HOT_STEPS 60

static unsigned rounds = 30;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long calls_hot, calls_level1, calls_level2, calls_level3, calls_dig, jumps;
uint32_t checksum;
static _Thread_local jmp_buf escape;
static volatile unsigned char *fault_page;
static volatile unsigned fault_count;

#define COUNT(c) (pthread_mutex_lock(&lock), (c)++, pthread_mutex_unlock(&lock))

__attribute__((noinline, disable_tail_calls))
uint32_t hot(uint32_t x)
{
    COUNT(calls_hot);
    for (int i = 0; i < HOT_STEPS; i++)
        x = x * 1664525u + 1013904223u;
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t dig(uint32_t depth, uint32_t x)
{
    COUNT(calls_dig);
    return depth == 0 ? hot(x) : dig(depth - 1, x + depth);
}

__attribute__((noinline, disable_tail_calls))
uint32_t level1(uint32_t x, int leave)
{
    COUNT(calls_level1);
    for (uint32_t i = 0; i < 2; i++)
        x = hot(x ^ i);
    x = dig(3, x);
    if (leave) {
        COUNT(jumps);
        longjmp(escape, (int)(x | 1));
    }
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t level2(uint32_t x, unsigned n)
{
    COUNT(calls_level2);
    for (uint32_t i = 0; i < 3; i++)
        x = level1(x + i, n % 7 == 6 && i == 2);
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t level3(uint32_t x, unsigned n)
{
    COUNT(calls_level3);
    for (uint32_t i = 0; i < 2; i++)
        x = level2(x, 2 * n + i);
    return x;
}

__attribute__((noinline, disable_tail_calls))
uint32_t crunch(uint32_t seed)
{
    volatile uint32_t x = seed;
    for (volatile unsigned r = 0; r < rounds; r++) {
        int jumped = setjmp(escape);
        if (jumped) {
            x ^= (uint32_t)jumped;
            continue;
        }
        x = level3(x, r);
    }
    return x;
}

static void *thread_main(void *arg)
{
    uint32_t x = crunch((uint32_t)(uintptr_t)arg);
    pthread_mutex_lock(&lock);
    checksum += x;
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void on_segv(int sig)
{
    (void)sig;
    fault_count++;
    mprotect((void *)fault_page, 4096, PROT_READ | PROT_WRITE);
}

__attribute__((noinline, disable_tail_calls))
unsigned faults(unsigned n)
{
    unsigned sum = 0;
    for (unsigned i = 0; i < n; i++) {
        mprotect((void *)fault_page, 4096, PROT_NONE);
        fault_page[i % 4096] = (unsigned char)i;      /* faults, then is retried */
        sum += fault_page[i % 4096];
    }
    return sum;
}

int main(int argc, char **argv)
{
    pthread_t threads[THREADS];
    unsigned nfaults = 50;

    if (argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        nfaults = (unsigned)strtoul(argv[2], NULL, 10);
    fault_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fault_page == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, NULL);
    unsigned sum = faults(nfaults);
    for (uintptr_t t = 0; t < THREADS; t++)
        if (pthread_create(&threads[t], NULL, thread_main, (void *)(t + 1)) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    uint32_t mine = crunch(100);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    printf("hotchain(%u) = %08x hot=%lu level1=%lu level2=%lu level3=%lu dig=%lu jumps=%lu "
           "faults=%u sum=%u\n", rounds, (unsigned)(checksum + mine), calls_hot, calls_level1,
           calls_level2, calls_level3, calls_dig, jumps, fault_count, sum);
    return 0;
}
