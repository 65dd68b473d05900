/*
 * vfork_status.c -- vfork, exit statuses, and execve from a vfork child.
 *
 * Exercises: vfork (musl issues the vfork syscall: the child shares the
 * parent's memory and the parent is suspended until the child calls _exit or
 * execve), exit_group via _exit, wait4 through waitpid, the wait status
 * encoding (WIFEXITED/WEXITSTATUS), and execve of this program itself.
 *
 *  1. The parent calls child_work(), then vforks; the child calls
 *     child_work() and _exit(7); the parent, resumed only once the child has
 *     gone, calls child_work() once more and checks the status is "exited 7".
 *     child_work() counts its calls in a global: as a vfork child writes the
 *     parent's own memory, the parent sees 3 calls (a kernel that ran vfork as
 *     a plain fork would leave it at 2).
 *  2. A second vfork child execve's this program with the argument "--exit3",
 *     which makes it exit with status 3 at once; the parent checks 3.
 *
 * Run it by a path (argv[0] containing '/'); otherwise it execs
 * /proc/self/exe.  Output: one line per check, exit 0; a failed check prints
 * a message to stderr and exits 1.
 */
#define _GNU_SOURCE /* vfork is not in POSIX.1-2008 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORK_RESULT 385 /* 1^2 + 2^2 + ... + 10^2 */
#define CHILD_STATUS 7
#define EXEC_STATUS 3

extern char **environ;

/* volatile: the vfork child's store must be re-read by the parent after
 * vfork returns, and the compiler cannot know vfork shares memory. */
static volatile int work_calls;

void fail(const char *what)
{
    fprintf(stderr, "vfork_status: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "vfork_status: check failed: %s\n", what);
        exit(1);
    }
}

/* The probe target: called by the parent before and after the vfork and by
 * the vfork child.  A little arithmetic so it is not an empty function. */
int child_work(void)
{
    int sum = 0;

    for (int i = 1; i <= 10; i++)
        sum += i * i;
    work_calls = work_calls + 1;
    return sum;
}

/* Reap pid and return its raw wait status. */
int reap(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    return status;
}

/* The whole child side stays inside this function: a vfork child runs on the
 * parent's stack, so it must never return from the function that called vfork. */
int vfork_and_exit(void)
{
    fflush(stdout);
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0)
        _exit(child_work() == WORK_RESULT ? CHILD_STATUS : 1);
    return reap(pid);
}

int vfork_and_exec(const char *self)
{
    /* Built before vfork: the child may only call execve or _exit. */
    char *child_argv[] = {(char *)self, "--exit3", NULL};

    fflush(stdout);
    pid_t pid = vfork();
    if (pid < 0)
        fail("vfork");
    if (pid == 0) {
        execve(self, child_argv, environ);
        _exit(127); /* execve failed */
    }
    return reap(pid);
}

void print_status(const char *label, int status)
{
    if (WIFEXITED(status))
        printf("%s: exited %d\n", label, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s: killed by signal %d\n", label, WTERMSIG(status));
    else
        printf("%s: status %#x\n", label, status);
}

const char *self_path(const char *argv0)
{
    return strchr(argv0, '/') ? argv0 : "/proc/self/exe";
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exit3") == 0)
        return EXEC_STATUS; /* the exec'd child of check 2 */

    check(child_work() == WORK_RESULT, "child_work before vfork");
    int status = vfork_and_exit();
    check(child_work() == WORK_RESULT, "child_work after vfork");
    print_status("vfork child", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_STATUS, "vfork child exits 7");
    printf("child_work calls seen by the parent: %d\n", work_calls);
    check(work_calls == 3, "the vfork child's call is visible in the shared memory");

    status = vfork_and_exec(self_path(argv[0]));
    print_status("vfork+execve child", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == EXEC_STATUS, "exec'd child exits 3");
    printf("vfork_status: ok\n");
    return 0;
}
