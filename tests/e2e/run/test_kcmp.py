"""kcmp(2) (issue 32, LTP kcmp01-03: ENOSYS before; with it the modeled configuration has
CONFIG_CHECKPOINT_RESTORE, which LTP's msgget04/05 and shmget05/06 ask for): two fds of one
description compare equal and two opens not (antisymmetric: 1 one way, 2 the other), a fork
inherits the descriptions but not the address space, fd table, fs_struct or signal handlers,
clone(CLONE_VM | CLONE_FILES) shares the space and the table, no task has an io_context or
an undo list (equal), and KCMP_EPOLL_TFD finds the file an epoll instance watches; ESRCH,
EBADF, EINVAL, ENOENT in kernel/kcmp.c's order. Compared with the native run; built by the
host's gcc (static; -m32 for i386)."""
import subprocess

import pytest

from tests.e2e.sandbox_runner import run_sandbox
from tests.e2e.static_c import build_static

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define KCMP_FILE 0
#define KCMP_VM 1
#define KCMP_FILES 2
#define KCMP_FS 3
#define KCMP_SIGHAND 4
#define KCMP_IO 5
#define KCMP_SYSVSEM 6
#define KCMP_EPOLL_TFD 7

static long kcmp(pid_t a, pid_t b, int type, unsigned long x, unsigned long y) {
    return syscall(SYS_kcmp, a, b, type, x, y);
}

static void show(const char *what, long r) {
    printf("%-28s %ld %s\n", what, r < 0 ? -1L : (r > 0 ? 1L : 0L), r < 0 ? strerrorname_np(errno) : "");
}

static char stack[65536];
static int child(void *arg) {
    pause();
    return 0;
}

int main(void) {
    pid_t me = getpid();
    int fd1 = open("/proc/self/exe", O_RDONLY);
    int fd2 = dup(fd1);
    int fd3 = open("/proc/self/exe", O_RDONLY);
    show("same fd", kcmp(me, me, KCMP_FILE, fd1, fd1));
    show("dup", kcmp(me, me, KCMP_FILE, fd1, fd2));
    show("two opens", kcmp(me, me, KCMP_FILE, fd1, fd3));
    long a = kcmp(me, me, KCMP_FILE, fd1, fd3), b = kcmp(me, me, KCMP_FILE, fd3, fd1);
    printf("antisymmetric %d\n", a + b == 3);
    show("bad fd", kcmp(me, me, KCMP_FILE, fd1, 200));
    show("bad type", kcmp(me, me, 9, 0, 0));
    show("no such pid", kcmp(me, 999999, KCMP_VM, 0, 0));
    pid_t forked = fork();
    if (forked == 0) { pause(); _exit(0); }
    show("fork inherited fd", kcmp(me, forked, KCMP_FILE, fd1, fd1));
    show("fork VM", kcmp(me, forked, KCMP_VM, 0, 0));
    show("fork FILES", kcmp(me, forked, KCMP_FILES, 0, 0));
    show("fork FS", kcmp(me, forked, KCMP_FS, 0, 0));
    show("fork SIGHAND", kcmp(me, forked, KCMP_SIGHAND, 0, 0));
    show("fork IO", kcmp(me, forked, KCMP_IO, 0, 0));
    show("fork SYSVSEM", kcmp(me, forked, KCMP_SYSVSEM, 0, 0));
    pid_t vm = clone(child, stack + sizeof stack, CLONE_VM | CLONE_FILES | SIGCHLD, NULL);
    show("CLONE_VM VM", kcmp(me, vm, KCMP_VM, 0, 0));
    show("CLONE_FILES FILES", kcmp(me, vm, KCMP_FILES, 0, 0));
    show("self VM", kcmp(me, me, KCMP_VM, 0, 0));
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    int pipes[2];
    pipe(pipes);
    fd3 = pipes[0];
    epoll_ctl(ep, EPOLL_CTL_ADD, fd3, &ev);
    struct { unsigned efd, tfd, toff; } slot = {ep, fd3, 0};
    show("epoll target", kcmp(me, me, KCMP_EPOLL_TFD, fd3, (unsigned long)&slot));
    show("epoll other", kcmp(me, me, KCMP_EPOLL_TFD, fd1, (unsigned long)&slot));
    slot.tfd = fd1;
    show("epoll none", kcmp(me, me, KCMP_EPOLL_TFD, fd1, (unsigned long)&slot));
    slot.efd = fd1;
    show("epoll not epoll", kcmp(me, me, KCMP_EPOLL_TFD, fd1, (unsigned long)&slot));
    kill(forked, SIGKILL); kill(vm, SIGKILL);
    waitpid(forked, NULL, 0); waitpid(vm, NULL, 0);
    return 0;
}
"""


@pytest.fixture(scope="module", params=["x86_64", "i386"])
def program(request, tmp_path_factory):
    return build_static(tmp_path_factory, "kcmp", PROGRAM, arch=request.param)


def test_kcmp_as_natively(program):
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=60)
    assert b"CLONE_VM VM                  0" in native.stdout
    assert b"epoll target                 0" in native.stdout
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
