"""A real-time signal sent twice is delivered twice, each with its own siginfo, in the order
sent; a classic signal pending is not sent again (kernel/signal.c legacy_queue,
collect_signal). The sandbox kept one instance of each signal, so LTP fcntl38's two
SIGRTMIN+1 of one chmod were one, and sigqueue's values were lost but the last. Compared with
the native run; built by the host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void take_all(const char *what) {
    struct timespec now = {0, 0};
    sigset_t all;
    siginfo_t info;
    sigfillset(&all);
    int sig;
    while ((sig = sigtimedwait(&all, &info, &now)) > 0)
        printf("%s: signal %d code %d value %d\n", what, sig, info.si_code, info.si_value.sival_int);
}

int main(void) {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGRTMIN + 1);
    sigaddset(&blocked, SIGRTMIN + 2);
    sigaddset(&blocked, SIGUSR1);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    for (int i = 1; i <= 3; i++)
        sigqueue(getpid(), SIGRTMIN + 2, (union sigval){.sival_int = i});
    sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = 7});
    kill(getpid(), SIGRTMIN + 1);
    sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 5});
    sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 6});
    take_all("process");
    syscall(SYS_tgkill, getpid(), gettid(), SIGRTMIN + 1);
    sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = 8});
    syscall(SYS_tgkill, getpid(), gettid(), SIGRTMIN + 1);
    take_all("thread first");
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "rt_signal_queue", PROGRAM, arch=request.param)


def test_real_time_signals_queue_and_classic_ones_merge(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    counts = [native.stdout.count(b"signal %d " % sig) for sig in (10, 35, 36)]
    assert counts == [1, 5, 3], native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
