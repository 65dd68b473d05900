"""signal(7)'s "Interruption of system calls and library functions by stop signals": a call a
stop signal and SIGCONT interrupt, with no handler, fails with EINTR for epoll_wait, semtimedop,
sigtimedwait, io_getevents and a recv under SO_RCVTIMEO (the sleeps that return -EINTR whatever
the signal; the socket's: net/core/sock.c sock_intr_errno), and goes on
for every other (msgrcv's -ERESTARTNOHAND is made again, as are read, recv, a futex wait and a
sleep). stop_interrupted_calls.c (static, the host's gcc, both arches), byte-identical with its
native run. Before, the sandbox went on sleeping in all of them, and made msgrcv fail with EINTR
once it did end them (and a recv under SO_RCVTIMEO slept its whole timeout: EAGAIN)."""
from pathlib import Path

import pytest

from tests.e2e.static_c import build_static, compare_with_native

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).with_name("stop_interrupted_calls.c").read_text()


@pytest.mark.parametrize("arch", ("x86_64", "i386"))
def test_a_stop_and_a_continue_end_the_calls_linux_ends(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"stop_calls_{arch}", SOURCE, arch=arch)
    compare_with_native(program, b"epoll_wait         -1 EINTR", b"io_getevents       -1 EINTR",
                        b"msgrcv             (still asleep)", b"recv SO_RCVTIMEO   -1 EINTR",
                        b"nanosleep          0")
