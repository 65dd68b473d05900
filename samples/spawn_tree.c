/*
 * spawn_tree.c -- a small process tree: exit statuses, reaping, an orphan.
 *
 * Exercises: fork from a forked child, wait4 through waitpid for a given pid
 * and with WNOHANG (ECHILD when no child is left), getppid, exit statuses of
 * several processes, and reparenting: a grandchild whose parent exits
 * without waiting for it is adopted by init (or the nearest subreaper).
 *
 *     parent ── child 0          exits 10
 *            ├─ child 1 ─┬─ grandchild 0   exits 20, reaped by child 1
 *            │   exits 11└─ grandchild 1   outlives child 1: the orphan
 *            └─ child 2          exits 12
 *
 * Only the two processes that reap print, and each prints only after its own
 * waitpid calls return, in child-index order: child 1 prints before it exits,
 * the parent after it has reaped all three children, so the output order is
 * fixed.  The orphan prints nothing.  It waits on the "go" pipe until the
 * parent has reaped child 1 (by then Linux has reparented it), checks that
 * getppid() no longer names child 1, and reports one byte on the "report"
 * pipe, which the parent prints at a fixed point; the orphan then exits
 * silently with status 21, which its new parent (init) collects.
 * A failed check prints a message to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 3
#define GRANDCHILDREN 2
#define CHILD_STATUS_BASE 10      /* child i exits 10 + i */
#define GRANDCHILD_STATUS_BASE 20 /* grandchild j exits 20 + j */
#define REPARENTED 'R'
#define NOT_REPARENTED 'S'

/* go: parent -> orphan, "your parent has been reaped";
 * report: orphan -> parent, REPARENTED or NOT_REPARENTED. */
static int go_pipe[2];
static int report_pipe[2];

void fail(const char *what)
{
    fprintf(stderr, "spawn_tree: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "spawn_tree: check failed: %s\n", what);
        exit(1);
    }
}

/* fork with stdout flushed first, so no buffered line is written twice. */
pid_t fork_flushed(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    return pid;
}

int reap(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    return status;
}

void print_status(const char *indent, const char *who, int index, int status)
{
    if (WIFEXITED(status))
        printf("%s%s %d: exited %d\n", indent, who, index, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("%s%s %d: killed by signal %d\n", indent, who, index, WTERMSIG(status));
    else
        printf("%s%s %d: status %#x\n", indent, who, index, status);
}

/* Grandchild 1: outlives its parent, says only whether it was reparented. */
void orphan(pid_t first_parent)
{
    char go;

    close(go_pipe[1]);
    close(report_pipe[0]);
    if (read(go_pipe[0], &go, 1) != 1)
        _exit(1); /* the top parent died without saying go */
    char verdict = getppid() != first_parent ? REPARENTED : NOT_REPARENTED;
    if (write(report_pipe[1], &verdict, 1) != 1)
        _exit(1);
    _exit(GRANDCHILD_STATUS_BASE + 1);
}

/* Child 1: forks two grandchildren, reaps only the first, exits. */
void middle_child(void)
{
    pid_t me = getpid();

    close(go_pipe[1]);
    close(report_pipe[0]);
    pid_t first = fork_flushed();
    if (first == 0) {
        close(go_pipe[0]);
        close(report_pipe[1]);
        _exit(GRANDCHILD_STATUS_BASE);
    }
    if (fork_flushed() == 0)
        orphan(me);
    close(go_pipe[0]);
    close(report_pipe[1]);
    int status = reap(first);
    print_status("  child 1: ", "grandchild", 0, status);
    printf("  child 1: exits %d without waiting for grandchild 1\n", CHILD_STATUS_BASE + 1);
    fflush(stdout);
    _exit(WIFEXITED(status) && WEXITSTATUS(status) == GRANDCHILD_STATUS_BASE
          ? CHILD_STATUS_BASE + 1 : 1);
}

void leaf_child(int index)
{
    close(go_pipe[1]);
    close(report_pipe[0]);
    close(go_pipe[0]);
    close(report_pipe[1]);
    _exit(CHILD_STATUS_BASE + index);
}

int main(void)
{
    pid_t pids[CHILDREN];
    int statuses[CHILDREN];

    if (pipe(go_pipe) != 0 || pipe(report_pipe) != 0)
        fail("pipe");
    printf("parent: forks %d children; child 1 forks %d grandchildren\n", CHILDREN,
           GRANDCHILDREN);
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork_flushed();
        if (pids[i] == 0) {
            if (i == 1)
                middle_child();
            leaf_child(i);
        }
    }
    close(go_pipe[0]);
    close(report_pipe[1]);
    /* Reap everything before printing: child 1 prints until it exits. */
    for (int i = 0; i < CHILDREN; i++)
        statuses[i] = reap(pids[i]);
    for (int i = 0; i < CHILDREN; i++) {
        print_status("parent: ", "child", i, statuses[i]);
        check(WIFEXITED(statuses[i]) && WEXITSTATUS(statuses[i]) == CHILD_STATUS_BASE + i,
              "child exit status");
    }

    int status;
    pid_t extra = waitpid(-1, &status, WNOHANG);
    int no_children = extra < 0 && errno == ECHILD;
    printf("parent: waitpid(-1, WNOHANG) afterwards: %s\n",
           no_children ? "ECHILD (the orphan is not our child)" : "a child is left");
    check(no_children, "no children left after reaping three");

    char verdict = 0;
    if (write(go_pipe[1], "g", 1) != 1)
        fail("write go");
    if (read(report_pipe[0], &verdict, 1) != 1)
        fail("read the orphan's report");
    printf("parent: grandchild 1 reparented after child 1 exited: %s\n",
           verdict == REPARENTED ? "yes" : "no");
    check(verdict == REPARENTED, "orphan reparented");
    printf("spawn_tree: ok\n");
    return 0;
}
