"""The registers gdb shows at a signal's stop while the program sleeps in a restartable call: on
Linux the call has returned when the signal woke it, and the signal is delivered only after
gdb's stop (the signal-delivery-stop, kernel/signal.c get_signal), so the PC is past the
system-call instruction, the result register holds -ERESTARTSYS (-512) and orig_rax/orig_eax
the call's number; at the delivery arch_do_signal_or_restart (arch/x86/kernel/signal.c) makes
the call again, or -EINTR for a handler without SA_RESTART (handle_signal).

A program reads an empty pipe with a SIGUSR1 handler installed (SA_RESTART); its child sends
SIGUSR1 once the read sleeps, then writes a byte. Under Debian's gdb natively and through
trapline's GDB stub, both arches, with `handle SIGUSR1 stop print pass` (the handler runs, the
read is made again and reads the byte) and `nopass` (the signal is dropped, the read made
again): the same report, frame, $rax/$eax, $orig_rax/$orig_eax and final line (and, on x86-64,
the same address). Before, the stub showed the PC at the instruction, the call's number in the
result register and -1 in orig_ax."""
import re

import pytest

from tests.e2e.gdb_batch import gdb_batch, native_gdb_batch
from tests.e2e.static_c import STATE_OF_C, build_static

pytestmark = pytest.mark.e2e

SOURCE = r"""
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

""" + STATE_OF_C + r"""
static volatile int handled;
static void on_usr1(int sig) { handled = sig; }

int main(void)
{
    int fds[2];
    char c = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    pipe(fds);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        struct timespec ms = {0, 1000000};
        while (state_of(parent) != 'S')
            nanosleep(&ms, NULL);
        kill(parent, SIGUSR1);
        while (state_of(parent) != 'S')
            nanosleep(&ms, NULL);
        write(fds[1], "x", 1);
        _exit(0);
    }
    long r = read(fds[0], &c, 1);
    printf("read %ld %c handled %d\n", r, c, handled);
    waitpid(pid, NULL, 0);
    return 0;
}
"""
RESULT = {"x86_64": ("$rax", "$orig_rax"), "i386": ("$eax", "$orig_eax")}
READ_NR = {"x86_64": 0, "i386": 3}
SEEN = re.compile(r"^(read .*|Program received signal .*|\$\d+ = .*|"
                  r"(?:#\d+ +)?(?:0x[0-9a-f]+ in )?\w+ \(\).*)$")


@pytest.fixture(scope="module", params=("x86_64", "i386"))
def program(request, tmp_path_factory):
    arch = request.param
    return arch, build_static(tmp_path_factory, f"restart_state_{arch}", SOURCE, arch=arch)


def _seen(out: str, arch: str) -> list[str]:
    lines = [line for line in out.splitlines()
             if SEEN.match(line) and not line.endswith(" in _start ()")]   # the stub's first stop
    if arch == "i386":          # the host's vDSO and the sandbox's: same function, other layout
        lines = [re.sub(r"0x[0-9a-f]+ in __kernel_vsyscall", "in __kernel_vsyscall", line)
                 for line in lines]
    return lines


@pytest.mark.parametrize("handle,handled", (("stop print pass", 10), ("stop print nopass", 0)))
def test_gdb_sees_the_interrupted_read_as_linux_leaves_it(program, handle, handled):
    arch, path = program
    result, orig = RESULT[arch]
    at_stop = [f"p {result}", f"p {orig}", "bt 1", "continue"]
    native = _seen(native_gdb_batch(str(path), [f"handle SIGUSR1 {handle}", "run", *at_stop]), arch)
    stub = _seen(gdb_batch(str(path), [f"handle SIGUSR1 {handle}", "continue", *at_stop]), arch)
    assert "Program received signal SIGUSR1, User defined signal 1." in native
    assert "$1 = -512" in native and f"$2 = {READ_NR[arch]}" in native, native
    assert native[-1] == f"read 1 x handled {handled}", native
    assert stub == native
