"""AT_EXECFN and the filename at the top of a new stack are the path execve was given, symlinks
unresolved, as Linux copies bprm->filename (fs/exec.c) before it opens the file; a #! script's
interpreter gets the script's path. Debian 12's /bin is a symlink to usr/bin, so /bin/true was
shown to the program as /usr/bin/true. glibc's ld.so prints the auxiliary vector with
LD_SHOW_AUXV=1, which is how the program's view is read here, both arches."""
from __future__ import annotations

import pytest

from tests.e2e.sandbox_runner import run_sandbox

pytestmark = pytest.mark.e2e


def _execfn(output: bytes) -> str:
    lines = [line for line in output.decode().splitlines() if line.startswith("AT_EXECFN:")]
    assert len(lines) == 1, output
    return lines[0].split(":", 1)[1].strip()


@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_the_program_sees_the_path_it_was_run_by(debian_rootfs, arch):
    done = run_sandbox(["/bin/true"], rootfs=debian_rootfs[arch], env={"LD_SHOW_AUXV": "1"})
    assert done.returncode == 0
    assert _execfn(done.stdout) == "/bin/true"


@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_a_scripts_interpreter_sees_the_scripts_path(debian_rootfs, arch):
    script = "printf '#!/bin/true\\n' > /tmp/s; chmod +x /tmp/s; LD_SHOW_AUXV=1 /tmp/s"
    done = run_sandbox(["/bin/sh", "-c", script], rootfs=debian_rootfs[arch])
    assert done.returncode == 0
    assert _execfn(done.stdout) == "/tmp/s"
