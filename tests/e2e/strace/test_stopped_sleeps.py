"""A child stopped while it sleeps in a system call, then continued, as strace -f shows it on the
host (kernel/signal.c get_signal and do_signal_stop; arch/x86/kernel/signal.c
arch_do_signal_or_restart): the sleep ends (`= ? ERESTART_RESTARTBLOCK` for clock_nanosleep,
`= ? ERESTARTSYS` for read of a pipe, `= -1 EINTR` for epoll_wait), strace shows the stop signal
and `--- stopped by SIG... ---`, then SIGCONT and the call made again (`restart_syscall(<...
resuming interrupted clock_nanosleep ...>)`, read anew; a futex wait with a timeout as
restart_syscall too: futex_wait's -ERESTART_RESTARTBLOCK); the parent's waitpid(WUNTRACED |
WCONTINUED) statuses and its SIGCHLDs' CLD_STOPPED / CLD_CONTINUED (taken by sigwaitinfo) are
the native ones. stopped_sleeps.c (static, the host's gcc, both arches), line for line."""
import re
from pathlib import Path

import pytest

from tests.e2e.static_c import build_static, compare_with_native
from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).with_name("stopped_sleeps.c").read_text()
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_a_stopped_sleep_is_shown_and_made_again_as_strace_shows(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"stopped_sleeps_{arch}", SOURCE, arch=GCC_ARCH[arch])
    result = compare("stopped_sleeps", arch, [str(program)], None, follow=True)
    stops = [line.split(" ", 1)[1] for line in result.native if "--- stopped by" in line]
    assert stops == ["--- stopped by SIGSTOP ---", "--- stopped by SIGTSTP ---",
                     "--- stopped by SIGSTOP ---", "--- stopped by SIGSTOP ---"], result.diff()
    restarts = [line.split("interrupted ")[1] for line in result.native
                if "restart_syscall(" in line]
    assert restarts == ["clock_nanosleep ...>) = 0",
                        "futex ...>) = -1 ETIMEDOUT (Connection timed out)"], result.diff()
    assert any("si_code=CLD_STOPPED" in line for line in result.native), result.diff()
    assert result.sandbox == result.native, result.diff()


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_a_stopped_sleep_ends_as_natively_untraced(arch, tmp_path_factory):
    """Untraced, the program sees what it sees natively: the statuses of waitpid(WUNTRACED |
    WCONTINUED), the SIGCHLDs' si_code and si_status, and epoll_wait's EINTR after the stop and
    the continue (its exit status 4), where the sleep and the read were made again."""
    program = build_static(tmp_path_factory, f"stopped_sleeps_{arch}", SOURCE, arch=GCC_ARCH[arch])
    compare_with_native(program, b"stopped: 0x137f stopped=1 sig=19 continued=0 code=5 status=19",
                        b"continued: 0xffff stopped=0 sig=0 continued=1 code=6 status=18",
                        b"exited: 0x7800", b"exited: 0x400 ", b"exited: 0x500 ")


STOPPED_BY_CHILD = Path(__file__).with_name("stopped_by_child.c").read_text()


@pytest.mark.parametrize("follow", (False, True))
@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_a_traced_program_stopped_by_its_child_as_strace_shows(arch, follow, tmp_path_factory):
    """The traced program itself stopped in clock_nanosleep by its child and continued (strace
    without -f: the program's lines alone), then the child stopping itself (raise: SI_TKILL)."""
    program = build_static(tmp_path_factory, f"stopped_by_child_{arch}", STOPPED_BY_CHILD,
                           arch=GCC_ARCH[arch])
    result = compare("stopped_by_child", arch, [str(program)], None, follow=follow)
    stops = [line for line in result.native if "--- stopped by SIGSTOP ---" in line]
    assert len(stops) == (2 if follow else 1), result.diff()
    assert any("restart_syscall(<... resuming interrupted clock_nanosleep ...>) = 0" in line
               for line in result.native), result.diff()
    assert result.sandbox == result.native, result.diff()


STOPPED_THREADS = Path(__file__).with_name("stopped_threads.c").read_text()
# The lines of a group stop in each thread: its call's end, the signal, the stop, the call anew.
# (Not compared: which thread takes the process's SIGCONT, complete_signal's pick among the
# threads that want it, the host's state; and two lines the sandbox's strace does not print yet,
# pthread_create's clone3 decoded and a thread's `+++ exited with 0 +++`.)
GROUP_STOP_LINE = re.compile(r"^P\d+ (?:.* = \? ERESTART\w+ .*|.* = -1 EINTR .*|--- SIGSTOP .*|"
                             r"--- stopped by .*|restart_syscall\(.*|read\(3, \"x\", 1\) = 1)$")


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_every_thread_takes_the_group_stop_as_strace_shows(arch, tmp_path_factory):
    """kernel/signal.c do_signal_stop: every thread of the stopped process ends its call and
    stops; the one that took SIGSTOP shows its delivery."""
    program = build_static(tmp_path_factory, f"stopped_threads_{arch}", STOPPED_THREADS,
                           ("-pthread",), arch=GCC_ARCH[arch])
    result = compare("stopped_threads", arch, [str(program)], None, follow=True)
    native = [line for line in result.native if GROUP_STOP_LINE.match(line)]
    sandbox = [line for line in result.sandbox if GROUP_STOP_LINE.match(line)]
    assert len([line for line in native if "--- stopped by SIGSTOP ---" in line]) == 3, native
    assert any("epoll_wait(" in line and "EINTR" in line for line in native), native
    assert sandbox == native, result.diff()
    compare_with_native(program, b"the poller thread: EINTR\n")
