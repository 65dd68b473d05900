"""Property (issue 26): when the reader of `trapline trace`'s records goes away after any
number of them, the run stops there (SIGPIPE, as strace): what was written is exactly the
first records of the run that nobody stopped, and the guest ran no further than the slice it
was in (a few more hits, not the rest of the program)."""
import signal
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from emu import host_stop
from trapline.sandbox import Sandbox
from trapline.tracing import StreamSink

FIB = Path(__file__).resolve().parents[2] / "samples" / "bin" / "{arch}" / "fib"
N = "12"                      # 2*F(13)-1 = 465 calls of fib


class ReaderGoesAway:
    """A host stream whose reader closes after `lines` lines: every later write is EPIPE."""

    def __init__(self, lines: int):
        self.lines, self.written, self.attempts = lines, [], 0

    def write(self, text: str) -> int:
        self.attempts += 1
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def trace(arch: str, out) -> object:
    sink = StreamSink(out, "text")
    return Sandbox(probes=["uprobe:fib:fib"], sink=sink).run([str(FIB).format(arch=arch), N])


_FULL: dict[str, list[str]] = {}


def full_run(arch: str) -> list[str]:
    if arch not in _FULL:
        out = ReaderGoesAway(10 ** 9)
        assert trace(arch, out).exit_code == 0
        _FULL[arch] = out.written
    return _FULL[arch]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=10)
@given(lines=st.integers(min_value=0, max_value=460))
def test_records_before_the_reader_left_are_the_full_runs_first(arch, lines):
    full = full_run(arch)
    assert len(full) == 465
    host_stop.clear()
    out = ReaderGoesAway(lines)
    try:
        result = trace(arch, out)
    finally:
        host_stop.clear()
    assert result.interrupted == signal.SIGPIPE and result.exit_code == 128 + signal.SIGPIPE
    assert out.written == full[:lines]
    # the stop comes at the end of the hook that found no reader: nothing like the 465 - lines
    # records the rest of the run would have tried
    assert out.attempts - lines <= 2
