#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The child stops the traced parent asleep in nanosleep and continues it; then it stops
 * itself (raise), and the parent continues it. The parent blocks SIGCHLD: where an ignored
 * one meets a traced parent is the host's timing. */
int main(void)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);      /* its SIGCHLDs' places would be the host's timing */
    pid_t parent = getpid(), pid = fork();
    struct timespec settle = {0, 100000000}, sleep = {0, 300000000};
    if (pid == 0) {
        nanosleep(&settle, NULL);
        kill(parent, SIGSTOP);
        nanosleep(&settle, NULL);
        kill(parent, SIGCONT);
        raise(SIGSTOP);
        _exit(7);
    }
    nanosleep(&sleep, NULL);
    int status;
    waitpid(pid, &status, WUNTRACED);
    printf("child %s\n", WIFSTOPPED(status) ? "stopped" : "not stopped");
    kill(pid, SIGCONT);
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
}
