"""Issue 26: trapline's output going away, and Ctrl-C / SIGTERM, end a run as they end strace:
no traceback, what was recorded written out whole, and death by the signal (a shell reports
128+N: 141, 130, 143). Subprocesses of `python -m trapline`; generous waits, no timing asserted."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.gdb_client import REPO
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

ARCHES = ("i386", "x86_64")
RECORD = re.compile(r"^\s*\d+\s+\d+\s+\d+ \S+ ")
STARTED_WITHIN = 120          # seconds for the first record (a loaded host, i386 start-up)
ENDED_WITHIN = 30             # seconds from the signal to the end


def sample(arch: str, name: str) -> str:
    return str(REPO / "samples" / "bin" / arch / name)


@contextmanager
def running(*argv, **popen):
    """`trapline ARGV` for the block; killed at its end if a failed check left it running."""
    run = subprocess.Popen([sys.executable, "-m", "trapline", *argv], cwd=REPO, **popen)
    try:
        yield run
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("fmt", ["text", "jsonl"])
@alternates("arch")
def test_trace_into_a_pipe_its_reader_closed(arch, fmt):
    """`trapline trace ... | head -2`: fib 20's 21 891 records do not fit in the pipe, so a
    write meets the closed pipe."""
    with running("trace", "--format", fmt, "-p", "uprobe:fib:fib", "--", sample(arch, "fib"), "20",
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        lines = [run.stdout.readline() for _ in range(2)]
        run.stdout.close()
        err = run.stderr.read()
        assert run.wait(timeout=300) == -signal.SIGPIPE
    assert err == b""
    for line in lines:
        assert RECORD.match(line.decode()) if fmt == "text" else json.loads(line)["probe"] == "uprobe:fib:fib"


@pytest.mark.parametrize("arch", ARCHES)
def test_strace_with_stderr_closed(arch):
    """`trapline run --strace PROGRAM 2>&-`: the lines go nowhere, the program runs."""
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "--strace", sample(arch, "hello")],
                          cwd=REPO, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          preexec_fn=lambda: os.close(2), timeout=300)
    assert done.returncode == 0 and done.stdout == b"hello, world\n"


@pytest.mark.parametrize("arch", ARCHES)
def test_strace_into_a_pipe_its_reader_closed(arch):
    """`trapline run --strace PROGRAM 2>&1 >/dev/null | head -1`, PROGRAM making calls for ever
    (hotchain's faults: a SIGSEGV, an mprotect and an rt_sigreturn a round)."""
    with running("run", "--strace", sample(arch, "hotchain"), "1", "1000000000",
                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        first = run.stderr.readline()
        run.stderr.close()
        assert first.endswith(b"\n") and run.wait(timeout=ENDED_WITHIN + STARTED_WITHIN) == -signal.SIGPIPE


@pytest.mark.parametrize("arch", ARCHES)
def test_strace_output_file_a_pipe_its_reader_closed(arch):
    """`trapline run -o /dev/stdout PROGRAM | head -1`: the -o file is the pipe (strace opens it
    with fopen); its write meets the closed pipe as stderr's does (it was a KernelPanic)."""
    with running("run", "-o", "/dev/stdout", sample(arch, "hotchain"), "1", "1000000000",
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        first = run.stdout.readline()
        run.stdout.close()
        err = run.stderr.read()
        assert first.startswith(b"execve(") and run.wait(timeout=ENDED_WITHIN + STARTED_WITHIN) == -signal.SIGPIPE
    assert err == b""


def wait_for_lines(path: Path, run: subprocess.Popen, count: int = 1) -> None:
    """Until `path` has `count` complete lines: the guest is in its loop, trapline's handlers
    are in place."""
    deadline = time.monotonic() + STARTED_WITHIN
    while time.monotonic() < deadline and run.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no record in {STARTED_WITHIN}s (exit status {run.poll()})")


def stop(run: subprocess.Popen, signum: int) -> int:
    run.send_signal(signum)
    try:
        return run.wait(timeout=ENDED_WITHIN)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {ENDED_WITHIN}s after signal {signum}") from None


def complete_lines(path: Path) -> list[str]:
    text = path.read_text()
    assert text.endswith("\n"), "the last record was cut"
    return text.splitlines()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@alternates("arch")
def test_signal_stops_a_compute_loop_that_makes_no_call(arch, signum, tmp_path):
    """compute N: one emu_start for as long as it computes (no system call, no hook). The strace
    lines of its start-up say when it is in the loop."""
    log = tmp_path / "strace.txt"
    with log.open("wb") as err, running("run", "--strace", sample(arch, "compute"), "1000000000",
                                        stdout=subprocess.DEVNULL, stderr=err,
                                        stdin=subprocess.DEVNULL) as run:
        wait_for_lines(log, run, count=2)       # set_thread_area/arch_prctl, set_tid_address
        assert stop(run, signum) == -signum
    lines = complete_lines(log)
    assert "Traceback" not in log.read_text() and "Aborted!" not in lines


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@alternates("arch")
def test_signal_stops_a_system_call_loop_with_its_records_written(arch, signum, tmp_path):
    """hotchain 1 FAULTS: a SIGSEGV and an mprotect per round, FAULTS rounds (for ever here).
    -c's table comes at the end too, and counts the entries written."""
    out = tmp_path / "trace.txt"
    with running("trace", "-c", "-o", str(out), "-p", "syscall:mprotect", "--",
                 sample(arch, "hotchain"), "1", "1000000000", stdout=subprocess.DEVNULL,
                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        wait_for_lines(out, run)
        assert stop(run, signum) == -signum
        table = run.stderr.read().decode()
    lines = complete_lines(out)
    assert lines and all(RECORD.match(line) and "syscall:mprotect" in line for line in lines)
    entries = [line for line in lines if "retval=" not in line]     # (an exit record has one)
    assert re.search(rf"^syscall:mprotect\s+{len(entries)}\s", table, re.M), table


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@alternates("arch")
def test_signal_ends_the_chrome_document_of_a_compute_loop(arch, signum, tmp_path):
    """The -o document of a probed compute loop is closed: it parses as JSON."""
    out = tmp_path / "trace.json"
    with running("trace", "--format", "chrome", "-o", str(out), "-p", "uprobe:compute:mix", "--",
                 sample(arch, "compute"), "1000000000", stdout=subprocess.DEVNULL,
                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        wait_for_lines(out, run, count=3)
        assert stop(run, signum) == -signum
    events = json.loads(out.read_text())["traceEvents"]
    assert events and {e["name"] for e in events} == {"mix"}


def test_sigint_ends_a_gdbserver_waiting_for_gdb():
    """`trapline gdbserver --listen` before GDB comes: Ctrl-C ends it as it ends a run."""
    with running("gdbserver", "--listen", "localhost:0", "--", sample("x86_64", "hello"),
                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL) as run:
        assert b"listening on" in run.stderr.readline()
        assert stop(run, signal.SIGINT) == -signal.SIGINT
