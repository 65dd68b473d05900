"""epoll_wait and epoll_pwait interrupted by a handled signal fail with EINTR even with
SA_RESTART (fs/eventpoll.c ep_poll returns -EINTR, never -ERESTARTSYS; signal(7) lists them
among the calls never restarted): the sandbox restarted them and they slept their whole
timeout. The program's output is the native run's, and its strace lines strace's
(`= -1 EINTR`, not `= ? ERESTARTSYS`), on both arches."""
import pytest

from tests.e2e.static_c import build_static, c_preamble, compare_with_native
from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

SOURCE = c_preamble("%s ") + r"""
#include <signal.h>
#include <sys/epoll.h>
#include <sys/time.h>

static void on_alarm(int sig) { (void)sig; }

int main(void)
{
    struct sigaction sa;
    struct itimerval soon = {{0, 0}, {0, 50000}};      /* 50 ms, within the 500 ms waits */
    struct epoll_event event;
    sigset_t none;
    int epoll = epoll_create1(0);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &soon, NULL);
    result("epoll_wait", epoll_wait(epoll, &event, 1, 500));
    setitimer(ITIMER_REAL, &soon, NULL);
    sigemptyset(&none);
    result("epoll_pwait", epoll_pwait(epoll, &event, 1, 500, &none));
    return 0;
}
"""
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_an_epoll_wait_a_handler_interrupts_fails_with_eintr(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"epoll_eintr_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, b"epoll_wait -1 EINTR", b"epoll_pwait -1 EINTR")
    result = compare("epoll_eintr", arch, [str(program)], None)
    assert len([line for line in result.native if line.startswith("epoll_") and "= -1 EINTR" in line]) == 2
    assert result.sandbox == result.native, result.diff()
