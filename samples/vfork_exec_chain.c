/*
 * vfork_exec_chain.c -- a chain of vfork children that each execve this
 * program again, with a probed function called at every level.
 *
 * Usage: vfork_exec_chain [N]   (N defaults to 3)
 *
 * Level K (the first run is level N) prints "level K: start" and calls
 * work(1) (work calls leaf once).  If K > 0 it vforks; the child calls
 * work(1) in the borrowed address space and execve's this program as level
 * K-1; the parent, resumed once the child has exec'd, reaps it (exit 0),
 * calls work(1) again and prints the counts.  Level 0 calls work(1) only.
 *
 * So, per process: the first process makes 2 work calls, each middle level
 * 1 (as a vfork child, before execve) + 2 (its exec'd image), the last
 * 1 + 1; every work call makes one leaf call.  The vfork child's call
 * increments the parent's counters (shared memory); the parent prints the
 * difference as the child's count.  Children print before their parents
 * (the parent waits), so the output is fixed.  Run it by a path (argv[0]
 * containing '/'); otherwise it execs /proc/self/exe.  A failed check
 * prints a message to stderr and exits 1.
 */
#define _GNU_SOURCE /* vfork is not in POSIX.1-2008 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

volatile int work_calls, leaf_calls;

void fail(const char *what)
{
    fprintf(stderr, "vfork_exec_chain: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Probe target. */
int leaf(int i)
{
    leaf_calls = leaf_calls + 1;
    return i + 7;
}

/* Probe target: calls leaf(i) for i < n. */
int work(int n)
{
    int sum = 0;

    work_calls = work_calls + 1;
    for (int i = 0; i < n; i++)
        sum += leaf(i);
    return sum;
}

/* vfork a child that calls work(1) and becomes level `next`; returns its
 * wait status.  The child side never returns from this function. */
int vfork_next_level(const char *self, int next)
{
    char level[16];
    char *child_argv[] = {(char *)self, level, NULL};

    snprintf(level, sizeof level, "%d", next);
    fflush(stdout);
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0) {
        work(1);
        execve(self, child_argv, environ);
        _exit(127); /* execve failed */
    }
    int status;
    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    return status;
}

const char *self_path(const char *argv0)
{
    return strchr(argv0, '/') ? argv0 : "/proc/self/exe";
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 3;

    if (k < 0) {
        fprintf(stderr, "usage: vfork_exec_chain [N]\n");
        return 1;
    }
    printf("level %d: start\n", k);
    work(1);
    if (k > 0) {
        int work_before = work_calls, leaf_before = leaf_calls;
        int status = vfork_next_level(self_path(argv[0]), k - 1);
        printf("level %d: vfork child before execve: work=%d leaf=%d\n", k,
               work_calls - work_before, leaf_calls - leaf_before);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "vfork_exec_chain: level %d: child status %#x\n", k - 1, status);
            return 1;
        }
        printf("level %d: child exited 0\n", k);
        /* Forget the child's calls: the counts printed below are this image's own. */
        work_calls = work_before;
        leaf_calls = leaf_before;
        work(1);
    }
    printf("level %d: work=%d leaf=%d\n", k, work_calls, leaf_calls);
    return 0;
}
