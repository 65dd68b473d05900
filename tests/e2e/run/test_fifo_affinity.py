"""Named pipes and CPU affinity with Debian's busybox, in the sandbox and natively.

mkfifo/mknod, ls -l, stat and a shell that writes into a fifo in the background while cat
reads it run on both sides (sandbox_runner.py: the native side is chrooted in a user
namespace, where, as in the sandbox, device nodes cannot be made: EPERM without CAP_MKNOD).
The CPU count is the sandbox's own (one modeled CPU, kernel_model/cpu/cpus.py) while the host
has its own, so nproc and taskset are checked against the modeled machine, not the host.
"""
from __future__ import annotations

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_options import run_sandbox_with_options
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

FIFO_SCRIPTS = {
    "listing": "cd /tmp; mkfifo f; ls -l f | cut -c1-10; stat -c '%F %a %s' f; test -p f && echo p",
    "write-read": "cd /tmp; mkfifo f; echo hi > f & cat f; wait",
    "twice": "cd /tmp; mkfifo f; mkfifo f; echo $?",
    "mknod": "cd /tmp; mknod -m 600 p1 p; stat -c '%F %a' p1",
    "rm": "cd /tmp; mkfifo f; rm f; ls -A",
    "two-writers": "cd /tmp; mkfifo f; (echo a; echo b) > f & cat < f; wait",
    "rdwr": "cd /tmp; mkfifo f; exec 3<>f; echo x >&3; read l <&3; echo got $l",
}


@pytest.mark.parametrize("case", sorted(FIFO_SCRIPTS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_fifo_matches_native(arch, case, fresh_rootfs, native_arch):
    argv = ["/bin/sh", "-c", FIFO_SCRIPTS[case]]
    native = run_native(argv, rootfs_dir=fresh_rootfs(native_arch[arch], "native"), env=FIXED_ENV)
    check_native_oracle(native, 0)
    # -v: an unimplemented syscall would be reported on stderr (without -v it is not), and
    # so make stderr differ from native's.
    sandbox = run_sandbox_with_options(argv, ["-v"], rootfs=fresh_rootfs(arch, "sandbox"),
                                       env=FIXED_ENV)
    assert b"unimplemented syscall" not in sandbox.stderr, sandbox.stderr
    assert_same_behaviour(sandbox, native)


@pytest.mark.parametrize("arch", ARCHES)
def test_device_nodes_are_made_in_the_overlay(arch, rootfs_for):
    """The guest is root in the sandbox and makes device nodes as root makes them on a tmpfs
    (vfs_mknod with CAP_MKNOD): recorded in the overlay, listed, nothing made on the host
    (tests/e2e/run/test_device_nodes.py opens them)."""
    script = "cd /tmp; mknod c1 c 1 3; echo $?; mknod b1 b 8 0; echo $?; ls -A"
    sandbox = run_sandbox(["/bin/sh", "-c", script], rootfs=rootfs_for(arch), env=FIXED_ENV,
                          clear_env=True)
    assert sandbox.stdout == b"0\n0\nb1\nc1\n"
    assert sandbox.stderr == b""


AFFINITY = ("nproc; taskset -p 1; taskset -p 3 $$ >/dev/null; echo $?; "
            "taskset -p 2 $$ >/dev/null 2>&1; echo $?; taskset -p 1 99999; echo $?")


@pytest.mark.parametrize("arch", ARCHES)
def test_affinity_of_the_modeled_cpu(arch, rootfs_for):
    sandbox = run_sandbox(["/bin/sh", "-c", AFFINITY], rootfs=rootfs_for(arch), env=FIXED_ENV,
                          clear_env=True)
    assert sandbox.returncode == 0, sandbox.describe()
    # taskset -p MASK prints the current mask before setting; 2 has no modeled CPU (EINVAL).
    assert sandbox.stdout == b"1\npid 1's current affinity mask: 1\n0\n1\n1\n"
    assert sandbox.stderr == b"taskset: can't get pid 99999's affinity: No such process\n"
