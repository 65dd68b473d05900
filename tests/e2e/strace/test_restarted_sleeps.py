"""Sleeps that a traced process's ignored SIGCHLD interrupts, as strace shows them: Linux
queues the signal for a traced task (kernel/signal.c sig_ignored), the sleep ends, and with no
handler to run the call is made again (arch_do_signal_or_restart): a relative clock_nanosleep
and poll with a timeout end with ERESTART_RESTARTBLOCK and go on as `restart_syscall(<...
resuming interrupted NAME ...>)`, an absolute clock_nanosleep, ppoll and pselect6 end with
ERESTARTNOHAND and are made again as themselves, their timeouts decoded, until `= 0 (Timeout)`. restarted_sleeps.c (static, the host's gcc, both arches) against strace
-f on the host, line for line."""
from pathlib import Path

import pytest

from tests.e2e.static_c import build_static
from tests.e2e.strace.compare import compare

pytestmark = pytest.mark.e2e

SOURCE = Path(__file__).with_name("restarted_sleeps.c").read_text()
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_interrupted_sleeps_are_made_again_as_strace_shows(arch, tmp_path_factory):
    program = build_static(tmp_path_factory, f"restarted_sleeps_{arch}", SOURCE, arch=GCC_ARCH[arch])
    result = compare("restarted_sleeps", arch, [str(program)], None, follow=True)
    restarts = [line for line in result.native if "restart_syscall(" in line]
    assert [line.split("interrupted ")[1] for line in restarts] == \
        ["clock_nanosleep ...>) = 0", "poll ...>) = 0"], result.diff()
    assert len([line for line in result.native if "ERESTARTNOHAND" in line]) == 3
    assert len([line for line in result.native if line.endswith("= 0 (Timeout)")]) == 2
    assert result.sandbox == result.native, result.diff()
