/*
 * quantum.c -- the same compute-bound work done inline, by threads or by forked processes
 * (issue 31: what the scheduler's quantum costs while several tasks are runnable).
 *
 * Usage: quantum inline|threads|fork [WORKERS [N]]   (defaults 3 and 20; WORKERS <= 8)
 *
 * Each of WORKERS workers computes fib(N) by the call-dense recursion of fib.c (two real
 * calls a level, no lock, no system call), so the work is the same in every mode:
 *   inline   main computes the WORKERS shares one after the other (one task all along);
 *   threads  WORKERS pthreads compute one share each, all runnable at once, main joins them;
 *   fork     WORKERS fork()ed children compute one share each, all runnable at once, and
 *            write their result into a pipe; the parent reads them in order and reaps them.
 * Output (the same in every mode and on both arches):
 *   workers=W fib(N)=X sum=W*X
 * A failed call prints a message to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORKERS 8

static unsigned n = 20;
static uint32_t results[MAX_WORKERS];

__attribute__((noinline, disable_tail_calls))
uint32_t fib(uint32_t k)
{
    return k < 2 ? k : fib(k - 1) + fib(k - 2);
}

void *worker(void *slot)
{
    *(uint32_t *)slot = fib(n);
    return NULL;
}

void fail(const char *what)
{
    fprintf(stderr, "quantum: %s\n", what);
    exit(1);
}

void run_threads(int workers)
{
    pthread_t tids[MAX_WORKERS];

    for (int i = 0; i < workers; i++)
        if (pthread_create(&tids[i], NULL, worker, &results[i]) != 0)
            fail("pthread_create");
    for (int i = 0; i < workers; i++)
        if (pthread_join(tids[i], NULL) != 0)
            fail("pthread_join");
}

void run_forks(int workers)
{
    int fds[MAX_WORKERS][2];

    for (int i = 0; i < workers; i++) {
        if (pipe(fds[i]) != 0)
            fail("pipe");
        pid_t pid = fork();
        if (pid < 0)
            fail("fork");
        if (pid == 0) {
            uint32_t value = fib(n);
            _exit(write(fds[i][1], &value, sizeof value) == sizeof value ? 0 : 1);
        }
        close(fds[i][1]);
    }
    for (int i = 0; i < workers; i++) {
        int status;
        if (read(fds[i][0], &results[i], sizeof results[i]) != sizeof results[i])
            fail("read");
        if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail("a child failed");
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "inline";
    int workers = argc > 2 ? atoi(argv[2]) : 3;
    uint32_t sum = 0;

    if (argc > 3)
        n = (unsigned)strtoul(argv[3], NULL, 10);
    if (workers < 1 || workers > MAX_WORKERS)
        fail("usage: quantum inline|threads|fork [WORKERS (1..8) [N]]");
    if (strcmp(mode, "inline") == 0) {
        for (int i = 0; i < workers; i++)
            worker(&results[i]);
    } else if (strcmp(mode, "threads") == 0) {
        run_threads(workers);
    } else if (strcmp(mode, "fork") == 0) {
        run_forks(workers);
    } else {
        fail("usage: quantum inline|threads|fork [WORKERS (1..8) [N]]");
    }
    for (int i = 0; i < workers; i++)
        sum += results[i];
    printf("workers=%d fib(%u)=%u sum=%u\n", workers, n, (unsigned)results[0], (unsigned)sum);
    return 0;
}
