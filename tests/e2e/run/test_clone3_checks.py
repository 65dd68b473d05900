"""clone3's checks in kernel/fork.c's order and CLONE_PIDFD (issue 32, LTP clone302: a size
past the struct read nothing (EFAULT expected), CLONE_FS|CLONE_NEWNS was EPERM (EINVAL), a
bad pidfd pointer and a stack without a size made a child that crashed): E2BIG over a page
or for unknown fields that are not zero, EFAULT for unknown fields past the mapping, EINVAL
below CLONE_ARGS_SIZE_VER0, for a stack without a size or a size without a stack, a signal
past 64 or one with CLONE_PARENT; EFAULT for a pidfd pointer that cannot be written, and
else the pidfd is the caller's, close-on-exec, and signals the child. Compared with the
native run, both arches (static, -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long clone3_errno(struct clone_args *args, size_t size) {
    errno = 0;
    long pid = syscall(SYS_clone3, args, size);
    if (pid == 0)
        _exit(0);
    if (pid > 0) {
        waitpid(pid, NULL, __WALL);
        return 0;
    }
    return errno;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char *page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(page + 4096, 4096);                        /* a guard page after the args */
    struct clone_args *args = (void *)(page + 4096 - sizeof *args);
    memset(args, 0, sizeof *args);
    args->exit_signal = SIGCHLD;
    printf("valid: %ld\n", clone3_errno(args, sizeof *args));
    printf("size past the guard: %ld\n", clone3_errno(args, sizeof *args + 1));
    printf("size over a page: %ld\n", clone3_errno(args, 4097));
    printf("size below VER0: %ld\n", clone3_errno(args, 63));
    struct clone_args *roomy = (void *)page;
    memset(roomy, 0, 200);
    roomy->exit_signal = SIGCHLD;
    printf("extra zero bytes: %ld\n", clone3_errno(roomy, 100));
    page[95] = 1;
    printf("extra nonzero byte: %ld\n", clone3_errno(roomy, 100));
    args->flags = CLONE_FS | CLONE_NEWNS;
    printf("CLONE_FS|CLONE_NEWNS: %ld\n", clone3_errno(args, sizeof *args));
    args->flags = CLONE_PIDFD;
    args->pidfd = 8;
    printf("pidfd to a bad address: %ld\n", clone3_errno(args, sizeof *args));
    args->flags = 0;
    args->stack = (uintptr_t)page;
    printf("stack without size: %ld\n", clone3_errno(args, sizeof *args));
    args->stack = 0;
    args->stack_size = 4096;
    printf("size without stack: %ld\n", clone3_errno(args, sizeof *args));
    args->stack_size = 0;
    args->exit_signal = 65;
    printf("signal 65: %ld\n", clone3_errno(args, sizeof *args));
    args->exit_signal = SIGCHLD;
    args->flags = CLONE_PARENT;
    printf("CLONE_PARENT with a signal: %ld\n", clone3_errno(args, sizeof *args));
    int pidfd = -1;
    args->flags = CLONE_PIDFD;
    args->pidfd = (uintptr_t)&pidfd;
    long pid = syscall(SYS_clone3, args, sizeof *args);
    if (pid == 0)
        _exit(0);
    printf("pidfd: %d, close-on-exec %d, signal 0 through it: %ld\n", pidfd >= 3,
           fcntl(pidfd, F_GETFD) & FD_CLOEXEC, syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0));
    waitpid(pid, NULL, 0);
    return 0;
}
"""
EXPECTED = b"""\
valid: 0
size past the guard: 14
size over a page: 7
size below VER0: 22
extra zero bytes: 0
extra nonzero byte: 7
CLONE_FS|CLONE_NEWNS: 22
pidfd to a bad address: 14
stack without size: 22
size without stack: 22
signal 65: 22
CLONE_PARENT with a signal: 22
pidfd: 1, close-on-exec 1, signal 0 through it: 0
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "clone3_checks", PROGRAM, arch=request.param)


def test_clone3_checks_and_pidfd(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert native.stdout == EXPECTED
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == EXPECTED, result.describe()
