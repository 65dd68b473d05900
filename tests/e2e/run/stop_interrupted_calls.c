/* Each call asleep in a child that its parent stops (SIGSTOP) and continues (SIGCONT), with no
 * handler anywhere: after the continue, the calls signal(7) names fail with EINTR (epoll_wait,
 * semtimedop, sigtimedwait, io_getevents, a recv under SO_RCVTIMEO), the others go on sleeping
 * as if nothing happened (msgrcv: ipc/msg.c's -ERESTARTNOHAND; inotify's read since Linux 3.8; recv, read, the futex
 * and the sleep to their first deadline). The parent kills what still sleeps 400 ms after. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

static int which;
/* inotify's directory, of its own: nobody else's files appear in it (as they do in /tmp) */
static char watched[] = "/tmp/stop-calls-XXXXXX";
static long call(void)
{
    char buf[64];
    struct timespec ts = {0, 300000000};
    switch (which) {
    case 0: { struct epoll_event ev; return epoll_wait(epoll_create1(0), &ev, 1, 300); }
    case 1: { int id = semget(IPC_PRIVATE, 1, 0600); struct sembuf op = {0, -1, 0};
              long r = semtimedop(id, &op, 1, &ts); int e = errno; semctl(id, 0, IPC_RMID); errno = e; return r; }
    case 2: { sigset_t s; sigemptyset(&s); sigaddset(&s, SIGUSR1); sigprocmask(SIG_BLOCK, &s, 0);
              return sigtimedwait(&s, 0, &ts); }
    case 3: { int id = msgget(IPC_PRIVATE, 0600); long r = msgrcv(id, buf, 8, 0, 0);
              int e = errno; msgctl(id, IPC_RMID, 0); errno = e; return r; }
    case 4: { aio_context_t ctx = 0; syscall(SYS_io_setup, 1, &ctx); struct io_event ev;
              return syscall(SYS_io_getevents, ctx, 1, 1, &ev, &ts); }
    case 5: { int fd = inotify_init(); inotify_add_watch(fd, watched, IN_CREATE);
              return read(fd, buf, sizeof buf); }
    case 6: { int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
              struct timeval tv = {0, 300000}; setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
              return recv(sv[0], buf, 1, 0); }
    case 7: { int w = 0; return syscall(SYS_futex, &w, FUTEX_WAIT, 0, &ts, 0, 0); }
    case 8: { int sv[2]; socketpair(AF_UNIX, SOCK_STREAM, 0, sv); return recv(sv[0], buf, 1, 0); }
    case 9: { int p[2]; pipe(p); return read(p[0], buf, 1); }
    case 10: return nanosleep(&ts, 0);
    }
    return 0;
}
static const char *names[] = {"epoll_wait", "semtimedop", "sigtimedwait", "msgrcv", "io_getevents",
    "inotify read", "recv SO_RCVTIMEO", "futex wait", "recv", "pipe read", "nanosleep"};

/* Wait until the child sleeps in its call ('S' in /proc/PID/stat): on a loaded host a fixed
 * delay could stop it before it got there. */
static void asleep(pid_t pid)
{
    char path[64], text[512];
    struct timespec ms = {0, 1000000};
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    for (;;) {
        FILE *stat = fopen(path, "r");
        size_t got = stat ? fread(text, 1, sizeof text - 1, stat) : 0;
        if (stat) fclose(stat);
        text[got] = 0;
        char *end = strrchr(text, ')');
        if (end && end[1] && end[2] == 'S')
            return;
        nanosleep(&ms, 0);
    }
}

int main(void)
{
    mkdtemp(watched);
    for (which = 0; which < 11; which++) {
        int p[2]; pipe(p);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            long r = call();
            char line[100];
            int n = snprintf(line, sizeof line, "%-18s %ld %s\n", names[which], r < 0 ? -1L : r, r < 0 ? strerrorname_np(errno) : "");
            write(p[1], line, n);
            _exit(0);
        }
        close(p[1]);
        asleep(pid);
        int status;
        kill(pid, SIGSTOP); waitpid(pid, &status, WUNTRACED);
        kill(pid, SIGCONT); waitpid(pid, &status, WCONTINUED);
        struct timespec past = {0, 400000000};
        nanosleep(&past, 0);
        kill(pid, SIGKILL);
        fcntl(p[0], F_SETFL, O_NONBLOCK);
        char out[100]; int n = read(p[0], out, sizeof out);
        if (n > 0) write(1, out, n); else printf("%-18s (still asleep)\n", names[which]), fflush(stdout);
        waitpid(pid, &status, 0); close(p[0]);
    }
    rmdir(watched);
    return 0;
}
