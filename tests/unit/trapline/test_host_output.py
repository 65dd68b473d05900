"""trapline/host_output.py: an output whose reader went away stops the run (SIGPIPE) instead of
raising; a stdio fd closed at start stays closed for the guest."""
import os
import signal
from pathlib import Path

import pytest

from emu import host_stop
from trapline import host_output
from trapline.host_output import Guarded
from trapline.sandbox import Sandbox

HELLO = Path(__file__).resolve().parents[3] / "samples" / "bin" / "{arch}" / "hello"


@pytest.fixture(autouse=True)
def no_request_left():
    host_stop.clear()
    yield
    host_stop.clear()


def test_a_write_to_a_pipe_with_no_reader_asks_the_stop_and_goes_to_dev_null():
    read_end, write_end = os.pipe()
    os.close(read_end)
    with os.fdopen(write_end, "w") as stream:
        guarded = Guarded(stream)
        guarded.write("x" * 10)
        guarded.flush()                           # EPIPE here: no BrokenPipeError
        assert host_stop.pending() == signal.SIGPIPE
        assert os.path.samefile(f"/proc/self/fd/{write_end}", os.devnull)
        stream.write("more")                      # the stream itself writes nowhere now
        stream.flush()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_stdio_fd_closed_at_start_is_closed_for_the_guest(arch, monkeypatch):
    monkeypatch.setattr(host_output, "_closed_at_start", {2})
    seen = []
    result = Sandbox(capture=False, on_start=lambda kernel, proc, session: seen.append(
        sorted(proc.fds.targets()))).run([str(HELLO).format(arch=arch)])
    assert result.exit_code == 0 and seen == [[0, 1]]
