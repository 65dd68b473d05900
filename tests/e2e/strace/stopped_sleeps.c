/* A child stopped by SIGSTOP while it sleeps in a system call, then continued by SIGCONT, as
 * strace -f shows it: the sleep ends (`= ? ERESTART_RESTARTBLOCK` for clock_nanosleep,
 * `= ? ERESTARTSYS` for a read of a pipe), the child's `--- SIGSTOP ... ---` and
 * `--- stopped by SIGSTOP ---`, the parent's SIGCHLD (CLD_STOPPED, then CLD_CONTINUED) and
 * its waitpid(WUNTRACED | WCONTINUED) statuses, the child's `--- SIGCONT ... ---` and the call
 * made again (`restart_syscall(<... resuming interrupted clock_nanosleep ...>)`, read anew);
 * epoll_wait, which signal(7) names among the calls a stop and a continue end with EINTR
 * even without a handler; a futex wait with a timeout, made again as restart_syscall. The parent blocks SIGCHLD and takes each one with sigwaitinfo after
 * the wait it belongs to: where an unblocked, ignored SIGCHLD meets a traced parent is the
 * host's timing. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SETTLE_NS 100000000L      /* the parent waits this long for the child to be asleep */

static void nap(void)
{
    struct timespec ts = {0, SETTLE_NS};
    nanosleep(&ts, NULL);
}

/* The wait's status and the SIGCHLD it goes with (si_code CLD_STOPPED, CLD_CONTINUED...). */
static void report(const char *what, int status)
{
    char line[120];
    sigset_t chld;
    siginfo_t info;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigwaitinfo(&chld, &info);
    int n = snprintf(line, sizeof line, "%s: %#x stopped=%d sig=%d continued=%d code=%d status=%d\n",
                     what, status, WIFSTOPPED(status), WIFSTOPPED(status) ? WSTOPSIG(status) : 0,
                     WIFCONTINUED(status), info.si_code, info.si_status);
    write(1, line, n);
}

/* Stop the sleeping child, see it stopped, continue it, see it continued. */
static void stop_and_continue(pid_t pid, int sig)
{
    int status;
    nap();
    kill(pid, sig);
    waitpid(pid, &status, WUNTRACED);
    report("stopped", status);
    kill(pid, SIGCONT);
    waitpid(pid, &status, WCONTINUED);
    report("continued", status);
}

static void reap(pid_t pid)
{
    int status;
    waitpid(pid, &status, 0);
    report("exited", status);
}

static void sleeper(void)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct timespec ts = {0, 3 * SETTLE_NS};
    clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
    _exit(0);
}

static void reader(int fd)
{
    char c;
    ssize_t n = read(fd, &c, 1);
    _exit(n == 1 ? c : 100);
}

/* (then it waits for the parent's byte: it must not exit before the parent saw it continued) */
static void poller(int fd)
{
    struct epoll_event ev;
    char c;
    int ep = epoll_create1(0);
    int n = epoll_wait(ep, &ev, 1, 3 * SETTLE_NS / 1000000);
    read(fd, &c, 1);
    _exit(n < 0 ? 4 : n);
}

/* FUTEX_WAIT with a timeout: -ERESTART_RESTARTBLOCK, made again as restart_syscall to the same
 * deadline, where it times out */
static void futex_waiter(void)
{
    int word = 0;
    struct timespec ts = {0, 3 * SETTLE_NS};
    long r = syscall(SYS_futex, &word, FUTEX_WAIT, 0, &ts, NULL, 0);
    _exit(r < 0 ? 5 : 0);
}

int main(void)
{
    int fds[2];
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    pid_t pid = fork();
    if (pid == 0)
        sleeper();
    stop_and_continue(pid, SIGSTOP);
    reap(pid);

    pipe(fds);
    pid = fork();
    if (pid == 0)
        reader(fds[0]);
    stop_and_continue(pid, SIGTSTP);
    nap();
    write(fds[1], "x", 1);
    reap(pid);

    pid = fork();
    if (pid == 0)
        poller(fds[0]);
    stop_and_continue(pid, SIGSTOP);
    write(fds[1], "y", 1);
    reap(pid);

    pid = fork();
    if (pid == 0)
        futex_waiter();
    stop_and_continue(pid, SIGSTOP);
    reap(pid);
    return 0;
}
