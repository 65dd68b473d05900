/* A child of three threads stopped by SIGSTOP while each sleeps (clock_nanosleep, a read of a
 * pipe, epoll_wait), then continued: each thread's call ends (the sleep and the read made again,
 * epoll_wait -1 EINTR), each is stopped (strace: `--- stopped by SIGSTOP ---`, the SIGSTOP's
 * delivery on the thread that took it). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static void *reader(void *arg)
{
    char c;
    (void)arg;
    read(fds[0], &c, 1);
    return NULL;
}

/* epoll_wait: EINTR after the stop and the continue, in this thread too */
static void *poller(void *arg)
{
    struct epoll_event ev;
    int ep = epoll_create1(0);
    int n = epoll_wait(ep, &ev, 1, 300);
    *(int *)arg = n < 0 ? errno : 0;
    return NULL;
}

int main(void)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    pipe(fds);
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t t, u;
        int polled = -1;
        pthread_create(&t, NULL, reader, NULL);
        pthread_create(&u, NULL, poller, &polled);
        struct timespec ts = {0, 300000000};
        nanosleep(&ts, NULL);
        pthread_join(t, NULL);
        pthread_join(u, NULL);
        _exit(polled);
    }
    struct timespec settle = {0, 100000000};
    nanosleep(&settle, NULL);
    int status;
    kill(pid, SIGSTOP);
    waitpid(pid, &status, WUNTRACED);
    kill(pid, SIGCONT);
    waitpid(pid, &status, WCONTINUED);
    write(fds[1], "x", 1);
    waitpid(pid, &status, 0);
    printf("the poller thread: %s\n", WEXITSTATUS(status) == EINTR ? "EINTR" : "no EINTR");
    return 0;
}
