"""An ignored signal taken while its thread is inside a call prints after the call's line
(client.py): ptrace's syscall-exit-stop comes before the signal-delivery-stop. In the sockets
sample the parent sleeps in read while its child writes "PING" and exits; the kernel model
wakes the reader for the data and again for the SIGCHLD and re-runs the read, which completes."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_sigchld_follows_the_read_it_came_during(arch):
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "-f", "--strace", "--",
                           str(ROOT / "samples" / "bin" / arch / "sockets")],
                          capture_output=True, timeout=300, cwd=ROOT)
    lines = done.stderr.decode().splitlines()
    read = next(i for i, line in enumerate(lines) if re.search(r'"PING", 64\) += 4$', line))
    signal = next(i for i, line in enumerate(lines) if "SIGCHLD" in line and "si_status=0," in line)
    assert lines[read].startswith("<... read resumed>")     # it slept while the child ran
    assert signal == read + 1, lines[read - 2:read + 3]
