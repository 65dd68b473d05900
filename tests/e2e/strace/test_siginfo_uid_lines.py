"""strace's signal lines name the sender's uid (printsiginfo's si_uid): the sandbox's siginfos
carried si_uid=0 whoever sent them, so a child of uid 65534's SIGCHLD read `si_uid=0` where
strace reads `si_uid=65534`, and so did its kill. A siginfo kept as the sender's bytes
(sigqueue's, mq_notify's) showed si_pid=0, si_uid=0 and no sigval, where strace shows them and
si_int/si_ptr when the value is not 0. Line-identical with native strace (the program's signals
only: -e trace=none) on both arches."""
import pytest

from tests.e2e.static_c import build_static
from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

SOURCE = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }

int main(void)
{
    sigset_t usr1, none;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigemptyset(&none);
    signal(SIGUSR1, handler);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    pid_t child = fork();
    if (child == 0) {           /* real uid 65534, root still as effective uid: it may signal */
        setresuid(65534, 0, 0);
        kill(getppid(), SIGUSR1);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    sigsuspend(&none);          /* the pending SIGUSR1's line */
    if (fork() == 0) {
        setuid(4321);
        _exit(7);
    }
    wait(NULL);
    return 0;
}
"""
QUEUED = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }

int main(void)
{
    sigset_t blocked, none;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGRTMIN);
    sigaddset(&blocked, SIGUSR1);
    sigemptyset(&none);
    signal(SIGRTMIN, handler);
    signal(SIGUSR1, handler);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    if (fork() == 0) {
        setresuid(65534, 0, 0);
        union sigval seven = { .sival_int = 7 }, zero = { .sival_int = 0 };
        sigqueue(getppid(), SIGRTMIN, seven);
        sigqueue(getppid(), SIGRTMIN, zero);
        _exit(0);
    }
    wait(NULL);
    sigsuspend(&none);
    sigsuspend(&none);
    mq_unlink("/siginfo_lines");
    struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 8 };
    mqd_t q = mq_open("/siginfo_lines", O_CREAT | O_RDWR, 0600, &attr);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    ev.sigev_value.sival_int = 5;
    mq_notify(q, &ev);
    mq_send(q, "m", 1, 0);
    sigsuspend(&none);
    mq_unlink("/siginfo_lines");
    return 0;
}
"""
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_siginfo_uid_lines_as_strace(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"siginfo_uid_lines_{arch}", SOURCE,
                           arch=GCC_ARCH[arch])
    result = compare("siginfo-uid-lines", arch, [str(program)], None,
                     options=("-e", "trace=none"))
    native = result.native
    assert any("si_code=CLD_EXITED" in line and "si_uid=65534" in line for line in native), \
        result.native_text
    assert any("SIGUSR1" in line and "si_uid=65534" in line for line in native), \
        result.native_text
    assert any("si_uid=4321" in line for line in native), result.native_text
    assert result.native == result.sandbox, result.diff()


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_queued_siginfo_lines_as_strace(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"siginfo_queued_lines_{arch}", QUEUED,
                           arch=GCC_ARCH[arch])
    result = compare("siginfo-queued-lines", arch, [str(program)], None,
                     options=("-e", "trace=none"))
    native = result.native
    assert any("SI_QUEUE" in line and "si_uid=65534, si_int=7, si_ptr=0x7}" in line
               for line in native), result.native_text
    assert any("SI_MESGQ" in line and "si_int=5" in line for line in native), result.native_text
    assert result.native == result.sandbox, result.diff()
