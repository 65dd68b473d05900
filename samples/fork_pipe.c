/*
 * fork_pipe.c -- fork, a pipe between parent and child, exit statuses, SIGPIPE.
 *
 * Exercises: pipe, fork, read/write on a pipe with EOF once every write end is
 * closed, close, exit_group, wait4 through waitpid, rt_sigaction (the child
 * resets SIGPIPE to SIG_DFL), and death by SIGPIPE.
 *
 *  1. The child writes LINES lines "line I\n" (I = 0 .. LINES-1) into the
 *     pipe, one write per line, each produced by produce(); it closes the pipe
 *     and exits with status 5.  The parent reads until EOF in fixed-size
 *     chunks, counts lines and bytes, folds the bytes into an FNV-1a
 *     checksum, compares them with what produce() makes, and only then reaps
 *     the child and prints its status.
 *  2. A second child writes into a pipe whose read end is already closed
 *     everywhere: the write raises SIGPIPE, whose default action kills the
 *     child, so the parent sees WIFSIGNALED with WTERMSIG 13.
 *
 * Output order is fixed: only the parent prints, after each child has been
 * reaped.  A failed check prints a message to stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINES 1000
#define CHILD_STATUS 5
#define CHUNK 256 /* smaller than the data, so the parent reads many times */

void fail(const char *what)
{
    fprintf(stderr, "fork_pipe: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fork_pipe: check failed: %s\n", what);
        exit(1);
    }
}

/* The probe target: formats line i into buf, returns its length. */
int produce(int i, char *buf, size_t size)
{
    return snprintf(buf, size, "line %d\n", i);
}

uint32_t fnv1a(uint32_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 16777619u;
    }
    return h;
}

struct tally {
    long lines;
    long bytes;
    uint32_t checksum;
};

/* What the parent must receive: the same lines, made by produce(). */
struct tally expected_tally(void)
{
    struct tally t = {0, 0, 2166136261u};
    char line[32];

    for (int i = 0; i < LINES; i++) {
        int n = produce(i, line, sizeof line);
        t.lines++;
        t.bytes += n;
        t.checksum = fnv1a(t.checksum, line, (size_t)n);
    }
    return t;
}

void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t done = write(fd, p, n);
        if (done < 0)
            _exit(1);
        p += done;
        n -= (size_t)done;
    }
}

void producer_child(int fd)
{
    char line[32];

    for (int i = 0; i < LINES; i++) {
        int n = produce(i, line, sizeof line);
        write_all(fd, line, (size_t)n);
    }
    if (close(fd) != 0)
        _exit(1);
    _exit(CHILD_STATUS);
}

struct tally read_until_eof(int fd)
{
    struct tally t = {0, 0, 2166136261u};
    char buf[CHUNK];
    ssize_t n;

    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0)
            fail("read from pipe");
        for (ssize_t i = 0; i < n; i++)
            t.lines += buf[i] == '\n';
        t.bytes += n;
        t.checksum = fnv1a(t.checksum, buf, (size_t)n);
    }
    return t;
}

int reap(pid_t pid)
{
    int status;

    if (waitpid(pid, &status, 0) != pid)
        fail("waitpid");
    return status;
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

void pipe_to_parent(void)
{
    int fds[2];

    if (pipe(fds) != 0)
        fail("pipe");
    fflush(stdout); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        close(fds[0]);
        producer_child(fds[1]);
    }
    close(fds[1]); /* else the parent's own write end would hide EOF */
    struct tally got = read_until_eof(fds[0]);
    close(fds[0]);
    int status = reap(pid);

    struct tally want = expected_tally();
    printf("received %ld lines, %ld bytes, checksum %08x\n", got.lines, got.bytes,
           (unsigned)got.checksum);
    check(got.lines == want.lines && got.bytes == want.bytes && got.checksum == want.checksum,
          "received data equals what produce() makes");
    print_status("writer child", status);
    check(WIFEXITED(status) && WEXITSTATUS(status) == CHILD_STATUS, "writer child exits 5");
}

void write_to_closed_pipe(void)
{
    int fds[2];

    if (pipe(fds) != 0)
        fail("pipe");
    close(fds[0]); /* before fork: no process holds a read end */
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        /* The caller (a shell, a test runner) might have left SIGPIPE ignored. */
        signal(SIGPIPE, SIG_DFL);
        write(fds[1], "x", 1);
        _exit(1); /* reached only if SIGPIPE did not kill us */
    }
    close(fds[1]);
    int status = reap(pid);
    print_status("SIGPIPE child", status);
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE, "child killed by SIGPIPE (13)");
}

int main(void)
{
    pipe_to_parent();
    write_to_closed_pipe();
    printf("fork_pipe: ok\n");
    return 0;
}
