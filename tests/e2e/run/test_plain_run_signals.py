"""A plain `trapline run -- PROGRAM` (started without click, trapline/plain_run.py) ends on Ctrl-C
and SIGTERM as a run parsed by click does (issue 26): no traceback, no "Aborted!", death by the
signal. Without --strace nothing is printed before the guest's loop, so the handlers' being in
place is read from /proc/PID/status (SigCgt gains SIGTERM, which Python itself leaves alone)."""
import signal
import subprocess
import time

import pytest

from tests.e2e.run.test_host_signals import ARCHES, STARTED_WITHIN, running, sample, stop
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e


def _catches(pid: int, signum: int) -> bool:
    with open(f"/proc/{pid}/status") as status:
        line = next(line for line in status if line.startswith("SigCgt:"))
    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)


def wait_for_handlers(run: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTED_WITHIN
    while time.monotonic() < deadline and run.poll() is None:
        if _catches(run.pid, signal.SIGTERM):
            return
        time.sleep(0.05)
    raise AssertionError(f"no handler in {STARTED_WITHIN}s (exit status {run.poll()})")


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@alternates("arch")
def test_signal_stops_a_plain_run(arch, signum):
    with running("run", "--", sample(arch, "compute"), "1000000000", stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        wait_for_handlers(run)
        assert stop(run, signum) == -signum
        out, err = run.stdout.read(), run.stderr.read()
    assert out == b"" and err == b""
