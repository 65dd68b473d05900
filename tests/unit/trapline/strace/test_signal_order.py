"""An ignored signal taken while its thread is inside a call prints after the call's line
(client.py): ptrace's syscall-exit-stop comes before the signal-delivery-stop. In the
spawn_tree sample the parent sleeps in wait4 for child 1 while child 2 exits (status 12): the
SIGCHLD of child 2 is pending through the wait, which completes when child 1 exits; its line
follows the wait4's resumed line, before the SIGCHLD of child 1 itself."""
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
    assert exited < waited                                  # child 2 ended during the wait
    assert "si_status=12," in lines[waited + 1], lines[waited - 2:waited + 3]
    assert "si_status=11," in lines[waited + 2], lines[waited - 2:waited + 3]
