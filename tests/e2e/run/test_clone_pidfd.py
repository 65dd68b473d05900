"""clone3 and clone with CLONE_PIDFD give the parent a close-on-exec pidfd of the new child
(kernel/fork.c copy_process; no pidfd was made before, the int at the address stayed as it was):
the parent waits on it with poll, signals through it and reaps the child. A C program built by
the host's gcc (static; -m32 for i386), run natively for the reference."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x1000
#endif

struct clone_args { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
                    stack_size, tls, set_tid, set_tid_size, cgroup; };

static void report(const char *how, long pid, int pidfd, int send) {
    int status;
    struct pollfd p = {pidfd, POLLIN, 0};
    printf("%s: pidfd %s, cloexec %d\n", how, pidfd > 2 ? "made" : "missing",
           fcntl(pidfd, F_GETFD));
    if (send)
        printf("send_signal %ld\n", syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0));
    int ready = poll(&p, 1, -1);
    printf("poll %d revents %x\n", ready, p.revents);
    waitpid(pid, &status, 0);
    printf("child %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
           WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    close(pidfd);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    int pidfd = -1;
    struct clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_PIDFD;
    args.pidfd = (uintptr_t)&pidfd;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0)
        _exit(7);
    report("clone3", pid, pidfd, 0);
    pidfd = -1;
    pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
    if (pid == 0) {
        pause();
        _exit(0);
    }
    report("clone", pid, pidfd, 1);
    return 0;
}
"""
EXPECTED = (b"clone3: pidfd made, cloexec 1\npoll 1 revents 1\nchild exit 7\n"
            b"clone: pidfd made, cloexec 1\nsend_signal 0\npoll 1 revents 1\nchild signal 15\n")


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "clone_pidfd", PROGRAM, arch=request.param)


def test_clone_pidfd_gives_the_parent_a_pidfd_of_its_child(program):
    native = subprocess.run([str(program)], capture_output=True, check=True)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
