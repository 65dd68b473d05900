/* Sleeps a child's exit interrupts: under strace the parent's ignored SIGCHLD is queued
 * (kernel/signal.c sig_ignored: not for a traced task), ends the sleep and, no handler
 * running, the call is made again: a relative sleep and poll with a timeout through
 * restart_syscall (-ERESTART_RESTARTBLOCK), an absolute sleep, ppoll and pselect6 as
 * themselves (-ERESTARTNOHAND), then time out: `= 0 (Timeout)`. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PARENT_NS 500000000L     /* the parent's sleep: long past the child's */

static pid_t child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct timespec ts = {0, 10000000};
        clock_nanosleep(CLOCK_REALTIME, 0, &ts, NULL);
        _exit(3);
    }
    return pid;
}

static void reap(pid_t pid)
{
    int status;
    waitpid(pid, &status, 0);
}

int main(void)
{
    struct timespec relative = {0, PARENT_NS}, absolute;
    pid_t pid = child();
    clock_nanosleep(CLOCK_REALTIME, 0, &relative, NULL);
    reap(pid);
    pid = child();
    clock_gettime(CLOCK_MONOTONIC, &absolute);
    absolute.tv_nsec += PARENT_NS;
    if (absolute.tv_nsec >= 1000000000L) {
        absolute.tv_sec += 1;
        absolute.tv_nsec -= 1000000000L;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &absolute, NULL);
    reap(pid);
    pid = child();
    poll(NULL, 0, PARENT_NS / 1000000);
    reap(pid);
    pid = child();
    ppoll(NULL, 0, &relative, NULL);
    reap(pid);
    pid = child();
    sigset_t none;
    sigemptyset(&none);
    pselect(0, NULL, NULL, NULL, &relative, &none);
    reap(pid);
    return 0;
}
