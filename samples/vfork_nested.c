/*
 * vfork_nested.c -- a vfork child that vforks a child of its own: US 7,185,320
 * FIG. 1 as the patent draws it.
 *
 *  1. The parent calls work(3) (the probe target; it calls leaf(i) 3 times),
 *     then vforks.
 *  2. The vfork child calls no probed function: it vforks at once (the
 *     nested vfork of FIG. 1, functions 42-46), reaps its own child, stores
 *     that child's exit status where the parent can read it, and leaves with
 *     _exit(status + 1).
 *  3. The grandchild calls work(2) (1 work, 2 leaf calls) and _exit(4).
 *  4. The parent, resumed once its child is gone, calls work(1) and prints.
 *
 * Every vfork child runs in the parent's memory, so the call counters its
 * work() increments are the parent's: the parent prints the difference
 * around the vfork as the grandchild's calls (the child makes none) and its
 * own calls separately.  Only the parent prints, so the output is fixed:
 *
 *   grandchild: work=1 leaf=2
 *   vfork child: exited 5, its vfork child exited 4
 *   parent: work=2 leaf=4
 *   vfork_nested: ok
 *
 * A failed check prints a message to stderr and exits 1.
 */
#define _GNU_SOURCE /* vfork is not in POSIX.1-2008 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRANDCHILD_STATUS 4

/* volatile: written by vfork children, re-read by the parent after vfork
 * returns; the compiler cannot know that vfork shares memory. */
volatile int work_calls, leaf_calls, grandchild_status;

void fail(const char *what)
{
    fprintf(stderr, "vfork_nested: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "vfork_nested: check failed: %s\n", what);
        exit(1);
    }
}

/* Probe target: a little arithmetic on its argument. */
int leaf(int i)
{
    leaf_calls = leaf_calls + 1;
    return i * i + 1;
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

int reap(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

/* The vfork child's side: its own vfork.  The grandchild stays inside this
 * function (a vfork child must never return from the function that called
 * vfork); the child returns the grandchild's wait status. */
int spawn_grandchild(void)
{
    pid_t pid = vfork();
    if (pid < 0)
        _exit(1); /* a vfork child may not use stdio: its buffers are the parent's */
    if (pid == 0) {
        work(2);
        _exit(GRANDCHILD_STATUS);
    }
    return reap(pid);
}

/* The parent's vfork; the child side stays inside this function too. */
int spawn_child(void)
{
    fflush(stdout);
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0) {
        int status = spawn_grandchild();
        if (status < 0 || !WIFEXITED(status))
            _exit(1);
        grandchild_status = WEXITSTATUS(status);
        _exit(grandchild_status + 1);
    }
    int status = reap(pid);
    if (status < 0)
        fail("waitpid");
    return status;
}

int main(void)
{
    work(3);
    int work_before = work_calls, leaf_before = leaf_calls;
    int status = spawn_child();
    printf("grandchild: work=%d leaf=%d\n", work_calls - work_before, leaf_calls - leaf_before);
    check(WIFEXITED(status), "the vfork child exits");
    printf("vfork child: exited %d, its vfork child exited %d\n", WEXITSTATUS(status),
           (int)grandchild_status);
    check(WEXITSTATUS(status) == GRANDCHILD_STATUS + 1 && grandchild_status == GRANDCHILD_STATUS,
          "exit statuses through both vforks");
    int parent_work = work_before, parent_leaf = leaf_before;
    work_before = work_calls, leaf_before = leaf_calls;
    work(1);
    parent_work += work_calls - work_before, parent_leaf += leaf_calls - leaf_before;
    printf("parent: work=%d leaf=%d\n", parent_work, parent_leaf);
    printf("vfork_nested: ok\n");
    return 0;
}
