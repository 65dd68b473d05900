"""The i386 ABI's original signal calls (issue 32, LTP getcontext01 on i386: ENOSYS
sigprocmask): sigprocmask, sigpending, sigaction with struct old_sigaction, signal's one-shot
handler, sgetmask/ssetmask and sigsuspend with its mask by value (kernel/signal.c). Compared
with the native run of the same -m32 program; x86-64 has none of these numbers."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble("%-30s ", "r") + r"""
#include <signal.h>
#include <sys/syscall.h>

struct old_sigaction { unsigned long handler, mask, flags, restorer; };
static volatile int hits;
static void on_signal(int sig) { hits++; }

int main(void) {
    unsigned long set = 1UL << (SIGUSR1 - 1), old = 0;
    result("sigprocmask block", syscall(SYS_sigprocmask, SIG_BLOCK, &set, &old));
    printf("  old %#lx\n", old);
    result("sgetmask", syscall(SYS_sgetmask));
    result("sigprocmask bad how", syscall(SYS_sigprocmask, 7, &set, &old));
    raise(SIGUSR1);
    unsigned long pending = 0;
    result("sigpending", syscall(SYS_sigpending, &pending));
    printf("  pending %#lx\n", pending);

    struct old_sigaction act = {(unsigned long)on_signal, 1UL << (SIGUSR2 - 1), 0, 0}, was;
    result("sigaction USR1", syscall(SYS_sigaction, SIGUSR1, &act, NULL));
    result("sigaction read back", syscall(SYS_sigaction, SIGUSR1, NULL, &was));
    printf("  mask %#lx flags %#lx same handler %d\n", was.mask, was.flags,
           was.handler == (unsigned long)on_signal);
    result("sigaction SIGKILL", syscall(SYS_sigaction, SIGKILL, &act, NULL));
    result("sigaction 0", syscall(SYS_sigaction, 0, NULL, &was));

    /* SIGUSR1 is pending and blocked: sigsuspend with an empty mask takes it at once */
    result("sigsuspend", syscall(SYS_sigsuspend, 0, 0, 0UL));
    printf("  hits %d\n", hits);
    result("mask after sigsuspend", syscall(SYS_sgetmask));

    result("signal USR2", syscall(SYS_signal, SIGUSR2, (unsigned long)on_signal) == 0 ? 0 : 1);
    result("signal USR2 again", syscall(SYS_signal, SIGUSR2, (unsigned long)SIG_DFL)
                                 == (long)on_signal);
    result("signal SIGSTOP", syscall(SYS_signal, SIGSTOP, (unsigned long)SIG_IGN));
    syscall(SYS_signal, SIGUSR2, (unsigned long)on_signal);
    raise(SIGUSR2);                      /* one shot: the action goes back to SIG_DFL */
    result("hits after USR2", hits);
    result("after one shot", syscall(SYS_sigaction, SIGUSR2, NULL, &was));
    printf("  handler %lu\n", was.handler);

    sigset_t full;                       /* a real-time signal blocked above the old word */
    sigemptyset(&full);
    sigaddset(&full, SIGRTMIN + 2);
    sigprocmask(SIG_SETMASK, &full, NULL);
    set = 1UL << (SIGINT - 1);
    result("sigprocmask setmask", syscall(SYS_sigprocmask, SIG_SETMASK, &set, NULL));
    sigprocmask(SIG_SETMASK, NULL, &full);
    printf("  rt still blocked %d int %d\n", sigismember(&full, SIGRTMIN + 2), sigismember(&full, SIGINT));
    result("ssetmask", syscall(SYS_ssetmask, 1UL << (SIGTERM - 1)));
    sigprocmask(SIG_SETMASK, NULL, &full);
    printf("  rt after ssetmask %d term %d\n", sigismember(&full, SIGRTMIN + 2), sigismember(&full, SIGTERM));
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return build_static(tmp_path_factory, "old_signal_calls", PROGRAM, arch="i386")


def test_old_signal_calls_as_natively(program):
    compare_with_native(program, b"sigsuspend                     -1 EINTR", b"hits 1",
                        b"rt still blocked 1 int 1", b"rt after ssetmask 0 term 1")
