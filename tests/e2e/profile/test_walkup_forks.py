"""The walk-up on a shell that forks (issue 18: "It will also be checked on programs beyond the
ones named here"): Debian's bash running ten subshells. A hook placed while a subshell lives is
placed in its copy of bash too; the subshell exits, and its zombie still names the space it
released, whose sites the session forgot — taking the hook out later finds nothing there to
take, which is no error (it was: "no probe walkup:identify:bash+0xc51d0")."""
import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_run import run_walkup
from trapline.sandbox import Sandbox

ARGV = ["/bin/bash", "-c", "for((i=0;i<10;i++));do(:);done;echo done"]


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_a_walk_up_over_a_shell_forking_subshells(debian_rootfs, deb_arch):
    rootfs = str(debian_rootfs[deb_arch])
    run = run_walkup(Sandbox(rootfs=rootfs), ARGV, interval=3_000, options=WalkUpOptions(top=3))
    assert run.result.exit_code == 0 and run.result.stdout == b"done\n"
    actions = [step.action for step in run.walk.timeline]
    assert "insert" in actions and "remove" in actions
    assert run.walk.hooks.executed > 0
