"""Run Debian's gdb in batch mode against `trapline gdbserver --stdio` (tests/e2e/gdb/test_gdb*.py).

gdb is installed by .ci/run (apt), or by the first test that needs it (host_tools.py); a host
that cannot install it fails these tests with that reason rather than skipping them. `remotetimeout` is raised because a loaded CI host may take longer than
gdb's 2 s to start the sandbox and answer the first packet."""
import os
import shlex
import signal
import subprocess
import sys
import time

from tests.e2e.gdb_client import REPO
from tests.e2e.host_tools import ensure_gdb

TIMEOUT = 300


def sample(arch: str, name: str) -> str:
    return str(REPO / "samples" / "bin" / arch / name)


def stub_command(program: str, args=(), probes=(), strategy="auto", records=None, options=()) -> str:
    parts = [sys.executable, "-m", "trapline", "gdbserver", "--stdio", *map(shlex.quote, options)]
    for probe in probes:
        parts += ["-p", probe]
    parts += ["--strategy", strategy]
    if records is not None:
        parts += ["-o", str(records)]
    return " ".join(parts + ["--", program, *(shlex.quote(str(a)) for a in args)])


def gdb_batch(program: str, commands, args=(), probes=(), strategy="auto", records=None,
              interrupt_at: str | None = None, options=(), guest_program: str | None = None) -> str:
    """gdb's output (stdout and stderr) for `commands` run against PROGRAM under the stub;
    `interrupt_at`: once this line has come out (an `echo` before a `continue`), send gdb a
    SIGINT (a Ctrl-C) a second later, while it waits in the command: a fixed delay would race
    the stub's start on a loaded host. `options`: the stub's run options (--rootfs ROOT...);
    `guest_program`: the program's path in the sandbox when it is not PROGRAM's (a rootfs)."""
    stub = stub_command(guest_program or program, args, probes, strategy, records, options)
    argv = [ensure_gdb(), "-batch", "-nx", program, "-ex", "set remotetimeout 120",
            "-ex", "set confirm off", "-ex", f"target remote | {stub}"]
    for command in commands:
        argv += ["-ex", command]
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            cwd=REPO, start_new_session=True)
    head = b""
    if interrupt_at is not None:
        for line in iter(proc.stdout.readline, b""):
            head += line
            if line.decode(errors="replace").strip() == interrupt_at:
                time.sleep(1.0)
                proc.send_signal(signal.SIGINT)
                break
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
        out = head + out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError("gdb did not finish:\n" + out.decode(errors="replace"))
    text = out.decode(errors="replace")
    assert "internal-error" not in text and "Remote replied unexpectedly" not in text, text
    return text


def native_gdb_batch(program: str, commands) -> str:
    """gdb's output for `commands` run against PROGRAM on the host (gdb starts it: `run`), the
    native counterpart of gdb_batch's, whose commands start from the stub's initial stop
    (`continue` where this one says `run`)."""
    argv = [ensure_gdb(), "-batch", "-nx", program]
    for command in commands:
        argv += ["-ex", command]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT,
                          cwd=REPO, check=False)
    return done.stdout.decode(errors="replace")
