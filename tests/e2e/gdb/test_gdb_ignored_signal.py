"""A signal the program ignores, under gdb: gdb ptraces it, and Linux queues even an ignored
signal for a ptraced task (kernel/signal.c sig_ignored), so the signal wakes the program's
epoll_wait, which returns -1 EINTR (fs/eventpoll.c ep_poll: never restarted), and gdb sees it
(a signal-delivery-stop: `Program received signal SIGUSR1` unless `handle SIGUSR1 nostop
noprint`). The call has returned by then, so it stays interrupted whatever gdb does with the
signal (`pass` or `nopass`), and the stop is past the system-call instruction with -EINTR in
the result register. The program also reads /proc/self/status, where TracerPid is not 0 under
gdb, and asks PTRACE_TRACEME, which fails with EPERM for a task already traced.

The same program under Debian's gdb natively and through trapline's GDB stub, on both arches:
the program's lines, whether gdb reports the signal, the frame it stops in and the result
register are the same (the stop's address too on x86-64; on i386 both stop in
__kernel_vsyscall, the host's vDSO and the sandbox's differing in layout). Before, the stub's
program was not ptraced for the kernel: epoll_wait slept its whole timeout and returned 0,
TracerPid was 0, PTRACE_TRACEME failed with ENOSYS, and the stop was at the system-call
instruction, the call to be made again."""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, native_gdb_batch
from tests.e2e.static_c import STATE_OF_C, build_static

pytestmark = pytest.mark.e2e

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void tracer_pid(void)
{
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "TracerPid:", 10) == 0)
            printf("TracerPid %s\n", strcmp(line, "TracerPid:\t0\n") ? "nonzero" : "0");
    fclose(status);
}

/* The parent's state in /proc/PID/stat: 'S' once it sleeps in epoll_wait (it makes no other
   sleeping call before), the child's signal then reaches it there whatever the host's speed. */
""" + STATE_OF_C + r"""
int main(void)
{
    struct epoll_event event;
    signal(SIGUSR1, SIG_IGN);
    tracer_pid();
    long traceme = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    printf("traceme %ld %s\n", traceme, traceme < 0 ? strerrorname_np(errno) : "");
    int epoll = epoll_create1(0);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        struct timespec ms = {0, 1000000};
        while (state_of(parent) != 'S')
            nanosleep(&ms, NULL);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    int r = epoll_wait(epoll, &event, 1, 3000);
    printf("epoll_wait %d %s\n", r, r < 0 ? strerrorname_np(errno) : "");
    waitpid(pid, NULL, 0);
    return 0;
}
"""
GCC_ARCH = {"x86_64": "x86_64", "i386": "i386"}
RESULT = {"x86_64": "$rax", "i386": "$eax"}
# gdb's lines that say what the program and gdb saw (not pids, which differ)
SEEN = re.compile(r"^(TracerPid .*|traceme .*|epoll_wait .*|Program received signal .*|\$\d+ = .*|"
                  r"(?:#\d+ +)?(?:0x[0-9a-f]+ in )?\w+ \(\).*)$")


@pytest.fixture(scope="module", params=("x86_64", "i386"))
def program(request, tmp_path_factory):
    arch = request.param
    return arch, build_static(tmp_path_factory, f"ignored_usr1_{arch}", SOURCE, arch=GCC_ARCH[arch])


def _seen(out: str, arch: str) -> list[str]:
    lines = [line for line in out.splitlines()
             if SEEN.match(line) and not line.endswith(" in _start ()")]   # the stub's first stop
    if arch == "i386":          # the host's vDSO and the sandbox's: same function, other layout
        lines = [re.sub(r"0x[0-9a-f]+ in __kernel_vsyscall", "in __kernel_vsyscall", line)
                 for line in lines]
    return lines


def _both(program: str, arch: str, handle: str, at_stop=()) -> tuple[list[str], list[str]]:
    """What gdb saw natively and through the stub, `at_stop` run at the signal's stop."""
    after = [*at_stop, "continue"] if at_stop else []
    native = native_gdb_batch(program, [f"handle SIGUSR1 {handle}", "run", *after])
    stub = gdb_batch(program, [f"handle SIGUSR1 {handle}", "continue", *after])
    return _seen(native, arch), _seen(stub, arch)


@pytest.mark.parametrize("handle", ("nostop noprint pass", "nostop noprint nopass"))
def test_an_ignored_signal_gdb_does_not_show_ends_epoll_wait_with_eintr(program, handle):
    arch, path = program
    native, stub = _both(str(path), arch, handle)
    assert native == ["TracerPid nonzero", "traceme -1 EPERM", "epoll_wait -1 EINTR"], native
    assert stub == native


@pytest.mark.parametrize("handle", ("stop print pass", "stop print nopass"))
def test_gdb_stops_at_the_ignored_signal_after_epoll_wait_returned(program, handle):
    """Passed or not, the call has returned -EINTR (-4) when gdb stops at the signal."""
    arch, path = program
    native, stub = _both(str(path), arch, handle, at_stop=(f"p {RESULT[arch]}", "bt 1"))
    assert "Program received signal SIGUSR1, User defined signal 1." in native
    assert "$1 = -4" in native and native[-1] == "epoll_wait -1 EINTR", native
    assert stub == native
