/*
 * vfork_probe.c -- probed functions called by a parent and by its vfork
 * children, with the number of calls each process made printed.
 *
 * The guest of US 7,185,320 (an instrumented parent that vforks): the probe
 * targets work(n), which calls leaf(i) n times, are called
 *
 *  1. by the parent before the first vfork (work(3): 1 work, 3 leaf calls);
 *  2. by the first vfork child before _exit(0) (work(2): 1 + 2);
 *  3. by the parent after the first child is gone (work(1): 1 + 1);
 *  4. by the second vfork child before it execve's this program again
 *     (work(4): 1 + 4) -- the exec'd image ("--execd") calls work(5)
 *     (1 + 5) in the same process, prints its own counts and exits 6;
 *  5. by the parent after the second child is gone (work(2): 1 + 2).
 *
 * A vfork child writes the parent's memory (it borrows the address space),
 * so the call counters it increments are the parent's: the parent reads them
 * before and after each child and prints the difference as the child's count,
 * and its own count separately.  The vfork children never touch stdio (they
 * share the parent's buffers); the exec'd image has its own and prints.  So
 * every line is deterministic, and a test knows the calls per process:
 *
 *   parent: work=3 leaf=6                  (steps 1, 3, 5)
 *   vfork child 1: work=1 leaf=2           (step 2)
 *   vfork child 2 before execve: work=1 leaf=4
 *   exec'd image: work=1 leaf=5            (same pid as vfork child 2)
 *
 * Run it by a path (argv[0] containing '/'); otherwise it execs
 * /proc/self/exe.  A failed check prints a message to stderr and exits 1.
 */
#define _GNU_SOURCE /* vfork is not in POSIX.1-2008 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXECD_STATUS 6

extern char **environ;

/* volatile: a vfork child's increments must be re-read by the parent after
 * vfork returns, and the compiler cannot know vfork shares memory. */
volatile int work_calls, leaf_calls;

void fail(const char *what)
{
    fprintf(stderr, "vfork_probe: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "vfork_probe: check failed: %s\n", what);
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
        fail("waitpid");
    return status;
}

/* The child side stays inside this function: a vfork child runs on the
 * parent's stack and must never return from the function that called vfork. */
int vfork_work_exit(int n)
{
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0) {
        work(n);
        _exit(0);
    }
    return reap(pid);
}

int vfork_work_exec(int n, const char *self)
{
    /* Built before vfork: the child only calls work, execve and _exit. */
    char *child_argv[] = {(char *)self, "--execd", NULL};

    fflush(stdout); /* the exec'd image prints to the same file */
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0) {
        work(n);
        execve(self, child_argv, environ);
        _exit(127); /* execve failed */
    }
    return reap(pid);
}

const char *self_path(const char *argv0)
{
    return strchr(argv0, '/') ? argv0 : "/proc/self/exe";
}

/* Calls made since a snapshot, as "work=W leaf=L". */
void print_counts(const char *who, int work_before, int leaf_before)
{
    printf("%s: work=%d leaf=%d\n", who, work_calls - work_before, leaf_calls - leaf_before);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--execd") == 0) {
        work(5);
        print_counts("exec'd image", 0, 0);
        return EXECD_STATUS;
    }
    int parent_work = 0, parent_leaf = 0;

    work(3);
    parent_work += work_calls, parent_leaf += leaf_calls;

    int work_before = work_calls, leaf_before = leaf_calls;
    int status = vfork_work_exit(2);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "vfork child 1 exits 0");
    print_counts("vfork child 1", work_before, leaf_before);

    work_before = work_calls, leaf_before = leaf_calls;
    work(1);
    parent_work += work_calls - work_before, parent_leaf += leaf_calls - leaf_before;

    work_before = work_calls, leaf_before = leaf_calls;
    status = vfork_work_exec(4, self_path(argv[0]));
    check(WIFEXITED(status) && WEXITSTATUS(status) == EXECD_STATUS, "exec'd image exits 6");
    print_counts("vfork child 2 before execve", work_before, leaf_before);

    work_before = work_calls, leaf_before = leaf_calls;
    work(2);
    parent_work += work_calls - work_before, parent_leaf += leaf_calls - leaf_before;
    printf("parent: work=%d leaf=%d\n", parent_work, parent_leaf);
    printf("vfork_probe: ok\n");
    return 0;
}
