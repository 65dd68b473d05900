/*
 * exec_chain.c -- repeated execve of the program itself, and FD_CLOEXEC.
 *
 * Usage: exec_chain [N]   (N defaults to 3)
 *
 * Exercises: execve replacing the running image N times in one process,
 * pipe and pipe2(O_CLOEXEC), fcntl(F_GETFD), and the rule that execve closes
 * close-on-exec descriptors and keeps the others (with their contents: a pipe
 * buffer survives every exec).
 *
 * The first run prints "exec_chain N", creates a normal pipe and a
 * close-on-exec pipe, writes a token into the normal one, and execve's itself
 * (argv[0]) as "exec_chain N-1 KEEP_RD KEEP_WR CLOEXEC_RD".  Each later run
 * prints "exec_chain K", checks that KEEP_RD and KEEP_WR are still open and
 * CLOEXEC_RD is closed (EBADF), and execs again with K-1.  The run with K = 0
 * reads the token back from the pipe and exits 0.  Descriptor numbers are
 * passed on but never printed.  stdout is flushed before each execve, which
 * discards the stdio buffer.  Run it by a path (argv[0] containing '/');
 * otherwise it execs /proc/self/exe.  A failed check prints a message to
 * stderr and exits 1.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKEN "token\n"

extern char **environ;

void fail(const char *what)
{
    fprintf(stderr, "exec_chain: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "exec_chain: check failed: %s\n", what);
        exit(1);
    }
}

const char *self_path(const char *argv0)
{
    return strchr(argv0, '/') ? argv0 : "/proc/self/exe";
}

int fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* Exec the next link of the chain; returns only on failure. */
void exec_next(const char *self, int n, int keep_rd, int keep_wr, int cloexec_rd)
{
    char args[4][16];
    char *argv[6];

    snprintf(args[0], sizeof args[0], "%d", n);
    snprintf(args[1], sizeof args[1], "%d", keep_rd);
    snprintf(args[2], sizeof args[2], "%d", keep_wr);
    snprintf(args[3], sizeof args[3], "%d", cloexec_rd);
    argv[0] = (char *)self;
    for (int i = 0; i < 4; i++)
        argv[i + 1] = args[i];
    argv[5] = NULL;
    fflush(stdout);
    execve(self, argv, environ);
    fail("execve");
}

/* The first link: set up both pipes and the token. */
void start_chain(const char *self, int n)
{
    int keep[2], cloexec[2];

    if (pipe(keep) != 0)
        fail("pipe");
    if (pipe2(cloexec, O_CLOEXEC) != 0)
        fail("pipe2");
    check(fd_is_open(cloexec[0]), "the O_CLOEXEC pipe is open before execve");
    if (write(keep[1], TOKEN, strlen(TOKEN)) != (ssize_t)strlen(TOKEN))
        fail("write token");
    if (n == 0) {
        printf("nothing to exec\n");
        exit(0);
    }
    exec_next(self, n - 1, keep[0], keep[1], cloexec[0]);
}

/* A later link: check the descriptors, then exec on or finish. */
void continue_chain(const char *self, int n, int keep_rd, int keep_wr, int cloexec_rd)
{
    int cloexec_closed = !fd_is_open(cloexec_rd) && errno == EBADF;

    printf("  after execve: normal pipe %s, close-on-exec pipe %s\n",
           fd_is_open(keep_rd) && fd_is_open(keep_wr) ? "open" : "CLOSED",
           cloexec_closed ? "closed" : "OPEN");
    check(fd_is_open(keep_rd) && fd_is_open(keep_wr), "normal descriptors survive execve");
    check(cloexec_closed, "close-on-exec descriptor closed by execve");
    if (n > 0)
        exec_next(self, n - 1, keep_rd, keep_wr, cloexec_rd);

    char buf[16];
    close(keep_wr);
    ssize_t got = read(keep_rd, buf, sizeof buf);
    if (got < 0)
        fail("read token");
    printf("token read back after the execs: %s\n",
           got == (ssize_t)strlen(TOKEN) && memcmp(buf, TOKEN, (size_t)got) == 0 ? "yes" : "no");
    check(got == (ssize_t)strlen(TOKEN) && memcmp(buf, TOKEN, (size_t)got) == 0,
          "pipe contents survive execve");
    printf("exec_chain: ok\n");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    const char *self = self_path(argv[0]);

    check(n >= 0 && (argc == 1 || argc == 2 || argc == 5), "usage: exec_chain [N]");
    printf("exec_chain %d\n", n);
    if (argc == 5)
        continue_chain(self, n, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    else
        start_chain(self, n);
    return 0;
}
