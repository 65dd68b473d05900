/*
 * fork_probe.c -- a forked child and its parent call the same probed function.
 *
 * Usage: fork_probe [N [M]]   (N defaults to 5, M to 3)
 *
 * The parent calls work(2) once, forks a child that calls work(2) N times,
 * prints its counts and exits 9, then calls work(2) M times itself while the
 * child runs, reaps the child and prints its own counts.  work(n) calls
 * leaf(i) n times.  A forked child has its own copy of the memory, so each
 * process counts its own calls in the same globals; the child prints before
 * it exits and the parent only after reaping it, so the output is fixed:
 *
 *   child: work=N leaf=2N
 *   child exited 9
 *   parent: work=M+1 leaf=2(M+1)
 *
 * A failed check prints a message to stderr and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_STATUS 9

int work_calls, leaf_calls;

void fail(const char *what)
{
    fprintf(stderr, "fork_probe: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Probe target: a little arithmetic on its argument. */
int leaf(int i)
{
    leaf_calls++;
    return i * 3 + 1;
}

/* Probe target: calls leaf(i) for i < n. */
int work(int n)
{
    int sum = 0;

    work_calls++;
    for (int i = 0; i < n; i++)
        sum += leaf(i);
    return sum;
}

void call_work(int times)
{
    for (int i = 0; i < times; i++)
        work(2);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5;
    int m = argc > 2 ? atoi(argv[2]) : 3;

    if (n < 0 || m < 0) {
        fprintf(stderr, "usage: fork_probe [N [M]]\n");
        return 1;
    }
    work(2);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        work_calls = leaf_calls = 0; /* count this process's calls only */
        call_work(n);
        printf("child: work=%d leaf=%d\n", work_calls, leaf_calls);
        exit(CHILD_STATUS);
    }
    call_work(m);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_STATUS) {
        fprintf(stderr, "fork_probe: child status %#x, expected exit %d\n", status, CHILD_STATUS);
        return 1;
    }
    printf("child exited %d\n", WEXITSTATUS(status));
    printf("parent: work=%d leaf=%d\n", work_calls, leaf_calls);
    return 0;
}
