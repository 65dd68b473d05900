"""Pid 1, the sandbox's virtual init, is a process a signal can name (issue 32, LTP
pidfd_send_signal02: a pidfd of /proc/1 as nobody was ESRCH where Linux says EPERM). kill(1,
...) and pidfd_send_signal on /proc/1 check the sender's right as kernel/signal.c
check_kill_permission does (root's process: EPERM for nobody, allowed for root); a signal
allowed is dropped, as an init drops those it has no handler for (kill.py). EXPECTED is the
program's output on the reference host, x86-64 and -m32 alike (signal 0 only, as root)."""
import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void report(const char *what, long r) {
    printf("%s: %s\n", what, r < 0 ? strerror(errno) : "ok");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int init = open("/proc/1", O_DIRECTORY | O_CLOEXEC);
    report("open /proc/1", init);
    report("root: kill(1, 0)", kill(1, 0));
    report("root: pidfd_send_signal(/proc/1, 0)", syscall(SYS_pidfd_send_signal, init, 0, NULL, 0));
    setresuid(65534, 65534, 65534);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGUSR1;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    report("nobody: kill(1, SIGUSR1)", kill(1, SIGUSR1));
    report("nobody: kill(1, 0)", kill(1, 0));
    report("nobody: pidfd_send_signal(/proc/1, SIGUSR1, SI_QUEUE)",
           syscall(SYS_pidfd_send_signal, init, SIGUSR1, &info, 0));
    return 0;
}
"""
EXPECTED = b"""\
open /proc/1: ok
root: kill(1, 0): ok
root: pidfd_send_signal(/proc/1, 0): ok
nobody: kill(1, SIGUSR1): Operation not permitted
nobody: kill(1, 0): Operation not permitted
nobody: pidfd_send_signal(/proc/1, SIGUSR1, SI_QUEUE): Operation not permitted
"""


@pytest.mark.parametrize("arch", ["x86_64", "i386"])
def test_signals_to_the_virtual_init(arch, tmp_path_factory, tmp_path):
    program = build_static(tmp_path_factory, "signal_init", PROGRAM, arch=arch)
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
