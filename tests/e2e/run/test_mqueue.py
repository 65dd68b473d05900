"""POSIX message queues (issue 32, LTP mq_timedsend01, mq_timedreceive01, mq_unlink01,
mq_notify02: ENOSYS before): a C program built by the host's gcc (static; -m32 for i386) opens,
fills and drains a queue and is compared with its native run: mq_open's errors (ENOENT, EINVAL
attributes, EACCES for a slash, EEXIST), the descriptor close-on-exec, priorities (highest
first, then arrival), EMSGSIZE both ways, EINVAL at MQ_PRIO_MAX, mq_getattr, the status line
read(2) gives, ETIMEDOUT at an absolute timeout, EAGAIN under O_NONBLOCK set by mq_setattr
(EINVAL for other flags), a receive sleeping until a forked child sends (its registered
notification then unused: a receiver was waiting), EBUSY for another process's registration, a
notification used once (SI_MESGQ, the sender's pid, sigev_value), EBADF, mq_unlink."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int got_code, got_value, got_pid;
static void on_usr1(int sig, siginfo_t *si, void *uc) {
    got_code = si->si_code; got_value = si->si_value.sival_int; got_pid = si->si_pid;
}
static void show(const char *what, long r) { printf("%s: %ld %s\n", what, r, r < 0 ? strerror(errno) : ""); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct mq_attr attr = {.mq_maxmsg = 3, .mq_msgsize = 16}, got;
    char buf[64];
    unsigned prio;
    mq_unlink("/kc_mq");
    show("open no create", mq_open("/kc_mq", O_RDWR));
    struct mq_attr big = {.mq_maxmsg = 70000, .mq_msgsize = 16};
    show("open too many msgs", mq_open("/kc_mq", O_RDWR | O_CREAT, 0600, &big));
    show("open slash", syscall(SYS_mq_open, "a/b", O_RDWR | O_CREAT, 0600, NULL));
    mqd_t q = mq_open("/kc_mq", O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
    show("open", q >= 0);
    show("open excl again", mq_open("/kc_mq", O_RDWR | O_CREAT | O_EXCL, 0600, &attr));
    show("cloexec", fcntl(q, F_GETFD));
    show("send prio 1", mq_send(q, "one", 3, 1));
    show("send prio 5", mq_send(q, "five", 4, 5));
    show("send prio 1 again", mq_send(q, "uno", 3, 1));
    show("send too long", mq_send(q, "0123456789abcdefg", 17, 0));
    show("send bad prio", mq_send(q, "x", 1, 32768));
    mq_getattr(q, &got);
    printf("attr: flags %ld max %ld size %ld cur %ld\n", got.mq_flags, got.mq_maxmsg, got.mq_msgsize, got.mq_curmsgs);
    int n = read(q, buf, sizeof buf - 1); buf[n > 0 ? n : 0] = 0;
    printf("status: %s", buf);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20000000; if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    show("send full, timed", mq_timedsend(q, "x", 1, 0, &ts));
    struct mq_attr nb = {.mq_flags = O_NONBLOCK};
    mq_setattr(q, &nb, NULL);
    show("send full, nonblocking", mq_send(q, "x", 1, 0));
    show("receive short buffer", mq_receive(q, buf, 8, &prio));
    for (int i = 0; i < 3; i++) {
        long r = mq_receive(q, buf, sizeof buf, &prio);
        printf("receive: %ld prio %u %.*s\n", r, prio, (int)r, buf);
    }
    show("receive empty, nonblocking", mq_receive(q, buf, sizeof buf, &prio));
    struct mq_attr bad = {.mq_flags = 1};
    show("setattr bad flags", mq_setattr(q, &bad, NULL));
    nb.mq_flags = 0;
    mq_setattr(q, &nb, NULL);
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR1, &sa, NULL);
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1, .sigev_value.sival_int = 77};
    show("notify", mq_notify(q, &ev));
    pid_t child = fork();
    if (child == 0) {
        show("child notify busy", mq_notify(q, &ev));
        usleep(10000);
        mq_send(q, "from child", 10, 2);
        _exit(0);
    }
    long r = mq_receive(q, buf, sizeof buf, &prio);     /* sleeps until the child sends */
    printf("blocked receive: %ld prio %u %.*s\n", r, prio, (int)r, buf);
    waitpid(child, NULL, 0);
    printf("notified: code %d value %d from child %d\n", got_code, got_value, got_pid == child);
    show("notify again", mq_notify(q, &ev));              /* the registration was used */
    show("unnotify", mq_notify(q, NULL));
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    ev.sigev_value.sival_int = 78;
    show("notify, nobody receiving", mq_notify(q, &ev));
    child = fork();
    if (child == 0) {
        mq_send(q, "news", 4, 0);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    siginfo_t si;
    show("sigwaitinfo", sigwaitinfo(&set, &si));
    printf("notified: code %d value %d from child %d\n", si.si_code, si.si_value.sival_int,
           si.si_pid == child);
    show("notify after its use", mq_notify(q, &ev));
    show("notify on a pipe", mq_notify(0, &ev));
    show("unlink", mq_unlink("/kc_mq"));
    show("unlink again", mq_unlink("/kc_mq"));
    return 0;
}
"""
EXPECTED = """open no create: -1 No such file or directory
open too many msgs: -1 Invalid argument
open slash: -1 Permission denied
open: 1 
open excl again: -1 File exists
cloexec: 1 
send prio 1: 0 
send prio 5: 0 
send prio 1 again: 0 
send too long: -1 Message too long
send bad prio: -1 Invalid argument
attr: flags 0 max 3 size 16 cur 3
status: QSIZE:10         NOTIFY:0     SIGNO:0     NOTIFY_PID:0     
send full, timed: -1 Connection timed out
send full, nonblocking: -1 Resource temporarily unavailable
receive short buffer: -1 Message too long
receive: 4 prio 5 five
receive: 3 prio 1 one
receive: 3 prio 1 uno
receive empty, nonblocking: -1 Resource temporarily unavailable
setattr bad flags: -1 Invalid argument
notify: 0 
child notify busy: -1 Device or resource busy
blocked receive: 10 prio 2 from child
notified: code 0 value 0 from child 0
notify again: -1 Device or resource busy
unnotify: 0 
notify, nobody receiving: 0 
sigwaitinfo: 10 
notified: code -3 value 78 from child 1
notify after its use: 0 
notify on a pipe: -1 Bad file descriptor
unlink: 0 
unlink again: -1 No such file or directory
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "mqueue", PROGRAM, arch=request.param)


def test_a_message_queue_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
