/*
 * forkbomb.c -- runaway process creation, and a program that meets the process
 * limit and recovers (issue 26).
 *
 *   forkbomb            `for (;;) fork();`: every process forks for ever,
 *                       whatever fork returns.
 *   forkbomb retry      the same, but a process whose fork fails with EAGAIN
 *                       waits a millisecond (nanosleep) before it tries again,
 *                       as a shell that reports "fork: retry" does.
 *   forkbomb recover    a well-behaved program at the limit: it forks children
 *                       that wait on a pipe until fork fails with EAGAIN, tries
 *                       RETRIES more times, then lets its children go (closes
 *                       the pipe), reaps them, forks one more child (which
 *                       now succeeds) and prints how it went.  Its output
 *                       depends on the process limit only: "recover: N
 *                       children before EAGAIN", "recover: M retries failed",
 *                       "recover: fork after reaping: ok".
 *
 * Neither bomb prints anything: the sandbox ends them with its report.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RETRIES 3

void fail(const char *what)
{
    fprintf(stderr, "forkbomb: %s: %s\n", what, strerror(errno));
    exit(1);
}

void bomb(void)
{
    for (;;)
        fork();
}

void retrying_bomb(void)
{
    struct timespec pause = {0, 1000000};

    for (;;) {
        if (fork() < 0 && errno == EAGAIN)
            nanosleep(&pause, NULL);
    }
}

/* A child: wait until the parent closes the pipe's write end, then exit. */
void wait_for_release(int fds[2])
{
    char byte;

    close(fds[1]);
    while (read(fds[0], &byte, 1) > 0)
        ;
    _exit(0);
}

int fork_until_eagain(int fds[2])
{
    int children = 0;

    for (;;) {
        pid_t pid = fork();
        if (pid == 0)
            wait_for_release(fds);
        if (pid < 0) {
            if (errno != EAGAIN)
                fail("fork");
            return children;
        }
        children++;
    }
}

int retry_fork(void)
{
    int failed = 0;

    for (int i = 0; i < RETRIES; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0)
            return failed;                 /* a child ended meanwhile: cannot, all wait */
        if (errno != EAGAIN)
            fail("fork");
        failed++;
    }
    return failed;
}

void reap_all(void)
{
    while (wait(NULL) > 0)
        ;
    if (errno != ECHILD)
        fail("wait");
}

int recover(void)
{
    int fds[2];

    if (pipe(fds) != 0)
        fail("pipe");
    int children = fork_until_eagain(fds);
    printf("recover: %d children before EAGAIN\n", children);
    printf("recover: %d retries failed\n", retry_fork());
    close(fds[1]);
    reap_all();
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid < 0)
        fail("fork after reaping");
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("waitpid");
    printf("recover: fork after reaping: ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "recover") == 0)
        return recover();
    if (argc > 1 && strcmp(argv[1], "retry") == 0)
        retrying_bomb();
    bomb();
    return 0;
}
