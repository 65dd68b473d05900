"""Signal-driven I/O on pipes (issue 32, LTP fcntl31: F_GETOWN_EX was EINVAL, F_SETOWN and
F_SETSIG were ignored and O_ASYNC sent nothing): the owner commands and their errors
(EINVAL for an owner type or signal out of range, ESRCH for no such pid), and the signal a
pipe sends the owner of an O_ASYNC description: F_SETSIG's with si_code POLL_IN, si_band
POLLIN|POLLRDNORM and si_fd when data arrives, the plain SIGIO (SI_KERNEL) without one, none
after O_ASYNC is cleared, and POLL_OUT to the writing side when a read makes room. Compared
with the native run; built by the host's gcc (static; -m32 for i386)."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native

pytestmark = pytest.mark.e2e

PROGRAM = c_preamble() + r"""
#include <signal.h>
int main(void) {
    int p[2];
    pipe(p);
    pid_t me = getpid();
    struct f_owner_ex ex = {99, 99};
    result("F_GETOWN", fcntl(p[0], F_GETOWN));
    result("F_GETOWN_EX", fcntl(p[0], F_GETOWN_EX, &ex));
    printf("ex %d %d\n", ex.type, ex.pid);
    result("F_GETSIG", fcntl(p[0], F_GETSIG));
    result("F_SETSIG 65", fcntl(p[0], F_SETSIG, 65));
    result("F_SETSIG -1", fcntl(p[0], F_SETSIG, -1));
    result("F_SETSIG USR1", fcntl(p[0], F_SETSIG, SIGUSR1));
    result("F_GETSIG", fcntl(p[0], F_GETSIG));
    result("F_SETOWN me", fcntl(p[0], F_SETOWN, me));
    result("F_GETOWN", fcntl(p[0], F_GETOWN) == me);
    fcntl(p[0], F_GETOWN_EX, &ex);
    printf("ex %d %d\n", ex.type, ex.pid == me);
    result("F_SETOWN -pgrp", fcntl(p[0], F_SETOWN, -getpgrp()));
    result("F_GETOWN", fcntl(p[0], F_GETOWN) == -getpgrp());
    fcntl(p[0], F_GETOWN_EX, &ex);
    printf("ex %d %d\n", ex.type, ex.pid == getpgrp());
    ex.type = F_OWNER_TID; ex.pid = me;
    result("F_SETOWN_EX tid", fcntl(p[0], F_SETOWN_EX, &ex));
    result("F_GETOWN", fcntl(p[0], F_GETOWN) == me);
    ex.type = 7;
    result("F_SETOWN_EX bad type", fcntl(p[0], F_SETOWN_EX, &ex));
    ex.type = F_OWNER_PID; ex.pid = 999999;
    result("F_SETOWN_EX no pid", fcntl(p[0], F_SETOWN_EX, &ex));
    result("F_SETOWN no pid", fcntl(p[0], F_SETOWN, 999999));
    result("F_SETOWN 0", fcntl(p[0], F_SETOWN, 0));
    /* signal-driven: SIGUSR1 (F_SETSIG) to me when data arrives */
    sigset_t set; sigemptyset(&set); sigaddset(&set, SIGUSR1); sigaddset(&set, SIGIO);
    sigprocmask(SIG_BLOCK, &set, NULL);
    fcntl(p[0], F_SETOWN, me);
    fcntl(p[0], F_SETFL, O_ASYNC);
    write(p[1], "x", 1);
    siginfo_t info;
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&set, &info, &zero);
    printf("sig %d code %d fd %d band %lx\n", sig, info.si_code, info.si_fd, (long)info.si_band);
    fcntl(p[0], F_SETSIG, 0);
    write(p[1], "y", 1);
    sig = sigtimedwait(&set, &info, &zero);
    printf("sig %d code %d\n", sig, info.si_code);
    fcntl(p[0], F_SETFL, 0);
    write(p[1], "z", 1);
    sig = sigtimedwait(&set, &info, &zero);
    printf("no async: %d\n", sig);
    char b[8]; read(p[0], b, 8);
    /* the write end with O_ASYNC gets a signal when room appears */
    fcntl(p[1], F_SETOWN, me); fcntl(p[1], F_SETSIG, SIGUSR1); fcntl(p[1], F_SETFL, O_ASYNC);
    write(p[1], "w", 1);
    sig = sigtimedwait(&set, &info, &zero);
    printf("writer after write: %d\n", sig);
    read(p[0], b, 8);
    sig = sigtimedwait(&set, &info, &zero);
    printf("writer after read: sig %d code %d band %lx\n", sig, info.si_code, (long)info.si_band);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "pipe_sigio", PROGRAM, arch=request.param)


def test_sigio_as_natively(program):
    compare_with_native(program, b"sig 10 code 1 fd 3 band 41")
