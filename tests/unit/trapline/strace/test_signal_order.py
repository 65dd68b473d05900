"""An ignored signal taken while its thread is inside a call prints after the call's line
(client.py): ptrace's syscall-exit-stop comes before the signal-delivery-stop. In the
spawn_tree sample the parent sleeps in wait4 for child 1 while child 2 exits (status 12):
child 2's SIGCHLD ends the wait as strace shows it natively (`= ? ERESTARTSYS`: a traced
task's ignored signal is queued, kernel/signal.c sig_ignored), its line follows, and wait4 is
made again; that wait completes when child 1 exits, and child 1's SIGCHLD follows its line."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_sigchld_follows_the_call_it_came_during(arch):
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "-f", "--strace", "--",
                           str(ROOT / "samples" / "bin" / arch / "spawn_tree")],
                          capture_output=True, timeout=300, cwd=ROOT)
    lines = done.stderr.decode().splitlines()
    waited = next(i for i, line in enumerate(lines)
                  if re.search(r"<\.\.\. wait4 resumed>.*WEXITSTATUS\(s\) == 11\}\], 0, NULL\) += \d+$", line))
    exited = next(i for i, line in enumerate(lines) if "+++ exited with 12 +++" in line)
    ended = next(i for i, line in enumerate(lines) if "wait4 resumed>" in line and "ERESTARTSYS" in line)
    assert exited < ended < waited                          # child 2 ended during the wait
    assert "si_status=12," in lines[ended + 1], lines[ended - 2:ended + 3]
    assert re.search(r"\] wait4\(\d+, +<unfinished \.\.\.>$", lines[ended + 2]), lines[ended:ended + 3]
    assert "si_status=11," in lines[waited + 1], lines[waited - 2:waited + 3]
