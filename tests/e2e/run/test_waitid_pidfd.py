"""waitid(P_PIDFD) (issue 32, LTP pidfd_open04; EINVAL before): the child a pidfd names is waited
for, an O_NONBLOCK pidfd whose child still runs gives EAGAIN (kernel/exit.c kernel_waitid: WNOHANG
with EAGAIN for 0), another kind of fd EBADF, a pidfd of a process that is no child ECHILD, a
negative fd EINVAL. A C program built by the host's gcc (static; -m32 for i386), run natively for
the reference."""
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
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static void show(const char *what, int r) {
    printf("%s: %d %s\n", what, r, r < 0 ? strerror(errno) : "");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    siginfo_t info;
    int go[2];
    pipe(go);
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        read(go[0], &c, 1);
        _exit(5);
    }
    int pidfd = syscall(SYS_pidfd_open, pid, 0);
    int nonblocking = syscall(SYS_pidfd_open, pid, O_NONBLOCK);
    show("nonblocking, running", waitid(P_PIDFD, nonblocking, &info, WEXITED));
    show("wnohang, running", waitid(P_PIDFD, nonblocking, &info, WEXITED | WNOHANG));
    show("not a pidfd", waitid(P_PIDFD, go[0], &info, WEXITED));
    show("negative", waitid(P_PIDFD, -1, &info, WEXITED));
    int own = syscall(SYS_pidfd_open, getpid(), 0);
    show("own pidfd", waitid(P_PIDFD, own, &info, WEXITED));
    write(go[1], "g", 1);
    memset(&info, 0, sizeof info);
    show("blocking", waitid(P_PIDFD, pidfd, &info, WEXITED));
    printf("child %d status %d code %d\n", info.si_pid == pid, info.si_status, info.si_code);
    show("reaped", waitid(P_PIDFD, pidfd, &info, WEXITED));
    return 0;
}
"""
EXPECTED = ("nonblocking, running: -1 Resource temporarily unavailable\nwnohang, running: 0 \n"
            "not a pidfd: -1 Bad file descriptor\nnegative: -1 Invalid argument\n"
            "own pidfd: -1 No child processes\nblocking: 0 \nchild 1 status 5 code 1\n"
            "reaped: -1 No child processes\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "waitid_pidfd", PROGRAM, arch=request.param)


def test_waitid_waits_for_the_child_a_pidfd_names(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, text=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout.decode() == EXPECTED, result.describe()
