#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t me;

/* the sender's pid shown as whom it names ("self": the first process, its global pid), so
   that the lines carry no pid */
static pid_t child;
static const char *who(pid_t pid) {
    if (pid == me) return "self";
    if (pid == child && child) return "child";
    if (pid == getppid()) return "parent";
    return "other";
}

static void show(const char *what, const siginfo_t *si) {
    printf("%-26s signo=%d code=%d pid=%s uid=%u", what, si->si_signo, si->si_code,
           who(si->si_pid), (unsigned)si->si_uid);
    if (si->si_signo == SIGCHLD)
        printf(" status=%d", si->si_status);
    printf("\n");
    fflush(stdout);
}

static void wait_one(const char *what, int sig) {
    sigset_t set;
    siginfo_t si;
    sigemptyset(&set);
    sigaddset(&set, sig);
    memset(&si, 0, sizeof si);
    if (sigwaitinfo(&set, &si) < 0) {
        printf("%-26s sigwaitinfo: %s\n", what, strerrorname_np(errno));
        return;
    }
    show(what, &si);
}

static volatile siginfo_t handled;
static void handler(int sig, siginfo_t *si, void *uc) { (void)sig; (void)uc; handled = *si; }

static void queue_uid(pid_t to, int sig, uid_t uid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = uid;
    syscall(SYS_rt_sigqueueinfo, to, sig, &si);
}

/* a child in a user namespace of its own where root (the kernel's uid 0) is 5: what it
   receives from root shows uid 5, from an unmapped uid 65534; what it sends root shows 0 */
static void in_user_namespace(void) {
    int ready[2], go[2];
    char byte;
    pipe(ready);
    pipe(go);
    fflush(stdout);
    if ((child = fork()) == 0) {
        close(ready[0]);
        close(go[1]);
        if (unshare(CLONE_NEWUSER) < 0) { printf("unshare: %s\n", strerrorname_np(errno)); _exit(1); }
        int fd = open("/proc/self/uid_map", O_WRONLY);
        write(fd, "5 0 1", 5);
        close(fd);
        printf("%-26s uid=%u\n", "in namespace", (unsigned)getuid());
        fflush(stdout);
        write(ready[1], "", 1);
        wait_one("ns: kill from root", SIGUSR1);
        wait_one("ns: sigqueue from root", SIGRTMIN);
        wait_one("ns: kill from 1234", SIGUSR2);
        kill(getppid(), SIGUSR1);
        queue_uid(getppid(), SIGRTMIN, 5);
        queue_uid(getppid(), SIGRTMIN, 77);
        write(ready[1], "", 1);             /* its lines are out */
        read(go[0], &byte, 1);
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    read(ready[0], &byte, 1);
    kill(child, SIGUSR1);
    union sigval v = { .sival_int = 1 };
    sigqueue(child, SIGRTMIN, v);
    pid_t ns_child = child;
    fflush(stdout);
    if (fork() == 0) { setresuid(1234, 0, 0); kill(ns_child, SIGUSR2); _exit(0); }
    wait(NULL);
    read(ready[0], &byte, 1);
    wait_one("sigchld of 1234", SIGCHLD);
    child = ns_child;
    wait_one("kill from namespace", SIGUSR1);
    wait_one("queued uid 5 from ns", SIGRTMIN);
    wait_one("queued uid 77 from ns", SIGRTMIN);
    write(go[1], "", 1);
    waitpid(child, NULL, 0);
    wait_one("sigchld of ns child", SIGCHLD);
}

int main(void) {
    sigset_t all;
    me = getpid();
    sigemptyset(&all);
    for (int s = 1; s < 32; s++)
        if (s != SIGSEGV && s != SIGKILL && s != SIGSTOP)
            sigaddset(&all, s);
    sigaddset(&all, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &all, NULL);

    /* a child that becomes nobody and exits: SIGCHLD's si_uid is the child's uid */
    fflush(stdout);
    if ((child = fork()) == 0) { setuid(65534); _exit(3); }
    wait_one("sigchld exit as nobody", SIGCHLD);
    waitpid(child, NULL, 0);

    /* a child of real uid 65534 that keeps 0 as its effective and saved uid, so that it may
       still signal root's processes: kill, tgkill, tkill, sigqueue and forged siginfos
       (glibc's sigwaitinfo shows SI_TKILL as SI_USER: sysdeps/unix/sysv/linux/sigtimedwait.c) */
    fflush(stdout);
    if ((child = fork()) == 0) {
        setresuid(65534, 0, 0);
        kill(getppid(), SIGUSR1);
        syscall(SYS_tgkill, getppid(), getppid(), SIGUSR2);
        syscall(SYS_tkill, getppid(), SIGHUP);
        union sigval v = { .sival_int = 7 };
        sigqueue(getppid(), SIGRTMIN, v);
        /* a forged si_code towards another process */
        siginfo_t si;
        memset(&si, 0, sizeof si);
        si.si_signo = SIGTERM;
        si.si_code = SI_TKILL;
        long r = syscall(SYS_rt_sigqueueinfo, getppid(), SIGTERM, &si);
        printf("%-26s %ld %s\n", "forged SI_TKILL", r, r < 0 ? strerrorname_np(errno) : "");
        si.si_code = 1;
        r = syscall(SYS_rt_sigqueueinfo, getppid(), SIGTERM, &si);
        printf("%-26s %ld %s\n", "forged code 1", r, r < 0 ? strerrorname_np(errno) : "");
        fflush(stdout);
        _exit(0);
    }
    waitpid(child, NULL, 0);            /* its lines first */
    wait_one("kill from uid 65534", SIGUSR1);
    wait_one("tgkill from uid 65534", SIGUSR2);
    wait_one("tkill from uid 65534", SIGHUP);
    wait_one("sigqueue from uid 65534", SIGRTMIN);
    wait_one("sigchld of the sender", SIGCHLD);

    /* a stopped and continued child as another uid: CLD_STOPPED, CLD_CONTINUED; it exits
       once the continued SIGCHLD is taken (a classic signal still pending is not sent again) */
    int taken[2];
    char token;
    pipe(taken);
    fflush(stdout);
    if ((child = fork()) == 0) {
        setuid(1234);
        raise(SIGSTOP);
        read(taken[0], &token, 1);
        _exit(0);
    }
    wait_one("sigchld stopped", SIGCHLD);
    waitpid(child, NULL, WUNTRACED);
    kill(child, SIGCONT);
    wait_one("sigchld continued", SIGCHLD);
    waitpid(child, NULL, WCONTINUED);
    write(taken[1], "", 1);
    wait_one("sigchld exit as 1234", SIGCHLD);
    waitpid(child, NULL, 0);

    /* pidfd_send_signal from uid 4321 */
    fflush(stdout);
    if ((child = fork()) == 0) {
        int fd = syscall(SYS_pidfd_open, getppid(), 0);
        setresuid(4321, 0, 0);
        syscall(SYS_pidfd_send_signal, fd, SIGUSR1, NULL, 0);
        _exit(0);
    }
    wait_one("pidfd_send_signal from 4321", SIGUSR1);
    waitpid(child, NULL, 0);
    wait_one("sigchld of 4321's sender", SIGCHLD);

    /* the death of a parent of uid 777 sends its child the PR_SET_PDEATHSIG signal */
    int done[2];
    pipe(done);
    fflush(stdout);
    if ((child = fork()) == 0) {
        setresuid(777, 0, 0);
        if (fork() == 0) {
            sigset_t set;
            siginfo_t si;
            sigemptyset(&set);
            sigaddset(&set, SIGUSR2);
            prctl(PR_SET_PDEATHSIG, SIGUSR2);
            kill(getppid(), SIGUSR1);           /* ready */
            sigwaitinfo(&set, &si);
            printf("%-26s signo=%d code=%d uid=%u\n", "pdeath from 777", si.si_signo,
                   si.si_code, (unsigned)si.si_uid);
            fflush(stdout);
            write(done[1], "", 1);
            _exit(0);
        }
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigwaitinfo(&set, NULL);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    close(done[1]);
    char byte;
    read(done[0], &byte, 1);
    close(done[0]);
    wait_one("sigchld of 777", SIGCHLD);

    /* SIGPIPE and SIGXFSZ as uid 555: sent by the writer to itself (SI_USER) */
    int p[2];
    pipe(p);
    close(p[0]);
    setresuid(555, 0, 0);
    write(p[1], "x", 1);
    wait_one("sigpipe as 555", SIGPIPE);
    struct rlimit rl = { 1, RLIM_INFINITY }, unlimited = { RLIM_INFINITY, RLIM_INFINITY };
    fflush(stdout);
    setrlimit(RLIMIT_FSIZE, &rl);
    int fd = open("/tmp/siginfo_uid_xfsz", O_CREAT | O_TRUNC | O_WRONLY, 0600);
    write(fd, "xy", 2);
    write(fd, "z", 1);
    setrlimit(RLIMIT_FSIZE, &unlimited);
    wait_one("sigxfsz as 555", SIGXFSZ);
    close(fd);
    unlink("/tmp/siginfo_uid_xfsz");
    kill(me, SIGUSR1);
    wait_one("kill self as 555", SIGUSR1);

    /* a SA_SIGINFO handler sees the same */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR2);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    show("handler raise as 555", (const siginfo_t *)&handled);
    sigprocmask(SIG_BLOCK, &one, NULL);

    /* mq_notify: the sender's uid */
    setresuid(0, 0, 0);
    mq_unlink("/siginfo_uid");
    struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 16 };
    mqd_t q = mq_open("/siginfo_uid", O_CREAT | O_RDWR, 0666, &attr);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGHUP;
    mq_notify(q, &ev);
    fflush(stdout);
    if ((child = fork()) == 0) {
        setresuid(999, 0, 0);
        mq_send(q, "m", 1, 0);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    wait_one("mq_notify sent by 999", SIGHUP);
    wait_one("sigchld of 999", SIGCHLD);
    mq_unlink("/siginfo_uid");

    /* waitid's siginfo: the child's uid */
    fflush(stdout);
    if ((child = fork()) == 0) { setuid(2222); _exit(5); }
    siginfo_t wi;
    memset(&wi, 0, sizeof wi);
    waitid(P_PID, child, &wi, WEXITED);
    show("waitid of 2222", &wi);
    wait_one("sigchld of 2222", SIGCHLD);

    /* a signalfd reads the same uid */
    sigset_t fdset;
    sigemptyset(&fdset);
    sigaddset(&fdset, SIGUSR1);
    int sfd = signalfd(-1, &fdset, 0);
    fflush(stdout);
    if ((child = fork()) == 0) { setresuid(3333, 0, 0); kill(getppid(), SIGUSR1); _exit(0); }
    struct signalfd_siginfo ssi;
    read(sfd, &ssi, sizeof ssi);
    printf("%-26s signo=%u code=%d pid=%s uid=%u\n", "signalfd from 3333", ssi.ssi_signo,
           ssi.ssi_code, who(ssi.ssi_pid), ssi.ssi_uid);
    close(sfd);
    waitpid(child, NULL, 0);
    wait_one("sigchld of 3333", SIGCHLD);

    in_user_namespace();
    return 0;
}
