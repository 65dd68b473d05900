"""An fd of a /proc/PID directory serves pidfd_send_signal as a pidfd (issue 32, LTP
pidfd_send_signal01: EBADF before). kernel/pid.c pidfd_to_pid falls back on
tgid_pidfd_to_pid, which takes a process's /proc directory but no task's (/proc/PID/task/TID),
nor /proc itself nor a regular file (EBADF); a siginfo given is delivered as rt_sigqueueinfo's
(si_code, si_value), without one the signal is SI_USER. Compared with the native run, both
arches (static, -m32)."""
import subprocess

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

static void on_signal(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    printf("signal %d code %d value %d\n", sig, si->si_code, si->si_value.sival_int);
}

static void send(const char *what, int fd, siginfo_t *info) {
    long r = syscall(SYS_pidfd_send_signal, fd, SIGUSR1, info, 0);
    printf("%s: %ld %s\n", what, r, r ? strerror(errno) : "");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGUSR1;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_value.sival_int = 42;
    int self = open("/proc/self", O_DIRECTORY | O_CLOEXEC);
    send("/proc/self with a siginfo", self, &info);
    send("/proc/self without", self, NULL);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", getpid());
    send("a task's directory", open(path, O_DIRECTORY), NULL);
    send("/proc", open("/proc", O_DIRECTORY), NULL);
    send("a regular file", open("/proc/self/status", O_RDONLY), NULL);
    return 0;
}
"""
EXPECTED = b"""\
signal 10 code -1 value 42
/proc/self with a siginfo: 0 
signal 10 code 0 value 0
/proc/self without: 0 
a task's directory: -1 Bad file descriptor
/proc: -1 Bad file descriptor
a regular file: -1 Bad file descriptor
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "proc_dir_pidfd", PROGRAM, arch=request.param)


def test_a_proc_pid_directory_fd_is_a_pidfd_for_pidfd_send_signal(program, tmp_path):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60,
                            cwd=tmp_path)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None, cwd=str(tmp_path))
    assert result.stdout == EXPECTED, result.describe()
