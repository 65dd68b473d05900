/*
 * signals.c -- signal delivery, handlers, masks and timers in one process.
 *
 * Exercises: rt_sigaction (with SA_SIGINFO, and SIG_IGN), kill, tkill/gettid
 * (musl's raise), rt_sigprocmask, rt_sigpending, rt_sigsuspend, pause, alarm,
 * setitimer/getitimer (ITIMER_REAL), signal frames and rt_sigreturn through
 * musl's restorer, a fault turned into SIGSEGV, and siglongjmp out of a
 * handler (which restores the signal mask saved by sigsetjmp).
 *
 *  a. SIGUSR1 handler installed with SA_SIGINFO; kill(getpid(), SIGUSR1);
 *     the handler records si_signo, si_code and si_pid.
 *  b. SIGALRM from alarm(1), waited for with pause(); then from a 10 ms
 *     one-shot setitimer(ITIMER_REAL), waited for with sigsuspend while
 *     SIGALRM is otherwise blocked (no lost-wakeup window).
 *  c. A write through a NULL pointer raises SIGSEGV; the handler
 *     siglongjmps back to the sigsetjmp point.
 *  d. SIGUSR2 set to SIG_IGN, then raise(SIGUSR2): the process survives and
 *     nothing is left pending.
 *  e. SIGUSR1 blocked with sigprocmask, raised: it is pending (sigpending)
 *     and the handler has not run; unblocking delivers it before
 *     sigprocmask returns.
 *
 * One line per check; exit 0, or a message on stderr and exit 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_count;
static volatile sig_atomic_t usr1_signo;
static volatile sig_atomic_t usr1_code;
static volatile sig_atomic_t usr1_from_self;
static volatile sig_atomic_t alarm_count;
static volatile sig_atomic_t segv_count;
static sigjmp_buf segv_return;

void fail(const char *what)
{
    fprintf(stderr, "signals: %s: %s\n", what, strerror(errno));
    exit(1);
}

void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "signals: check failed: %s\n", what);
        exit(1);
    }
}

void on_usr1(int sig, siginfo_t *info, void *ucontext)
{
    (void)ucontext;
    usr1_count++;
    usr1_signo = info->si_signo == sig ? sig : -1;
    usr1_code = info->si_code;
    usr1_from_self = info->si_pid == getpid();
}

void on_alarm(int sig)
{
    (void)sig;
    alarm_count++;
}

void on_segv(int sig)
{
    (void)sig;
    segv_count++;
    siglongjmp(segv_return, 1);
}

void install(int sig, void (*handler)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        fail("sigaction");
}

void check_siginfo_handler(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        fail("sigaction SIGUSR1");
    if (kill(getpid(), SIGUSR1) != 0)
        fail("kill");
    /* A signal a process sends itself is delivered before kill returns. */
    printf("a. SIGUSR1 via kill: handler ran %d time(s), si_signo %s, si_code %s, si_pid %s\n",
           (int)usr1_count, usr1_signo == SIGUSR1 ? "SIGUSR1" : "wrong",
           usr1_code == SI_USER ? "SI_USER" : "wrong", usr1_from_self ? "self" : "wrong");
    check(usr1_count == 1 && usr1_signo == SIGUSR1, "SA_SIGINFO handler saw SIGUSR1");
    check(usr1_code == SI_USER && usr1_from_self, "siginfo names kill() from this process");
}

void check_alarm_pause(void)
{
    install(SIGALRM, on_alarm);
    alarm_count = 0;
    unsigned previous = alarm(1);
    /* One second is far longer than the two calls between alarm and pause. */
    while (alarm_count == 0)
        pause();
    printf("b. SIGALRM via alarm(1) + pause: handler ran %d time(s), no earlier alarm: %s\n",
           (int)alarm_count, previous == 0 ? "yes" : "no");
    check(alarm_count == 1 && previous == 0, "alarm woke pause");
}

void check_itimer_sigsuspend(void)
{
    sigset_t block, old, wait_mask;
    struct itimerval timer, left;

    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    if (sigprocmask(SIG_BLOCK, &block, &old) != 0)
        fail("sigprocmask");
    alarm_count = 0;
    memset(&timer, 0, sizeof timer);
    timer.it_value.tv_usec = 10000; /* one shot: it_interval stays 0 */
    if (setitimer(ITIMER_REAL, &timer, NULL) != 0)
        fail("setitimer");
    wait_mask = old;
    sigdelset(&wait_mask, SIGALRM);
    while (alarm_count == 0)
        sigsuspend(&wait_mask); /* returns -1/EINTR after the handler */
    if (sigprocmask(SIG_SETMASK, &old, NULL) != 0)
        fail("sigprocmask");
    if (getitimer(ITIMER_REAL, &left) != 0)
        fail("getitimer");
    int disarmed = left.it_value.tv_sec == 0 && left.it_value.tv_usec == 0;
    printf("b. SIGALRM via setitimer(ITIMER_REAL, 10 ms) + sigsuspend: handler ran %d time(s), "
           "timer disarmed: %s\n", (int)alarm_count, disarmed ? "yes" : "no");
    check(alarm_count == 1 && disarmed, "one-shot itimer fired once");
}

void check_segv_longjmp(void)
{
    /* Loaded through a volatile so the compiler cannot see the NULL and
     * turn the store into a trap instruction. */
    int *volatile target = NULL;

    install(SIGSEGV, on_segv);
    if (sigsetjmp(segv_return, 1) == 0) {
        *target = 42;
        check(0, "the NULL write did not fault");
    }
    printf("c. SIGSEGV from a NULL write: handler ran %d time(s), siglongjmp returned\n",
           (int)segv_count);
    check(segv_count == 1, "SIGSEGV handler ran once");
    /* siglongjmp restored the mask sigsetjmp saved: SIGSEGV is not blocked. */
    sigset_t now;
    if (sigprocmask(SIG_BLOCK, NULL, &now) != 0)
        fail("sigprocmask");
    check(!sigismember(&now, SIGSEGV), "SIGSEGV unblocked after siglongjmp");
}

void check_ignored(void)
{
    sigset_t pending;

    if (signal(SIGUSR2, SIG_IGN) == SIG_ERR)
        fail("signal SIGUSR2");
    if (raise(SIGUSR2) != 0)
        fail("raise");
    if (sigpending(&pending) != 0)
        fail("sigpending");
    printf("d. SIGUSR2 ignored, raise(SIGUSR2): survived, pending: %s\n",
           sigismember(&pending, SIGUSR2) ? "yes" : "no");
    check(!sigismember(&pending, SIGUSR2), "an ignored signal is discarded");
}

void check_blocked_pending(void)
{
    sigset_t block, pending;

    usr1_count = 0;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &block, NULL) != 0)
        fail("sigprocmask SIG_BLOCK");
    if (raise(SIGUSR1) != 0)
        fail("raise");
    if (sigpending(&pending) != 0)
        fail("sigpending");
    int was_pending = sigismember(&pending, SIGUSR1);
    int ran_while_blocked = usr1_count;
    if (sigprocmask(SIG_UNBLOCK, &block, NULL) != 0)
        fail("sigprocmask SIG_UNBLOCK");
    int ran_after_unblock = usr1_count;
    printf("e. SIGUSR1 blocked and raised: pending %s, handler ran %d time(s) while blocked, "
           "%d after unblock\n", was_pending ? "yes" : "no", ran_while_blocked, ran_after_unblock);
    check(was_pending && ran_while_blocked == 0, "blocked signal stays pending");
    check(ran_after_unblock == 1, "unblocking delivers the pending signal");
}

int main(void)
{
    check_siginfo_handler();
    check_alarm_pause();
    check_itimer_sigsuspend();
    check_segv_longjmp();
    check_ignored();
    check_blocked_pending();
    printf("signals: ok\n");
    return 0;
}
