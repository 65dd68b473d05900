"""chroot inside the sandbox with Debian's busybox, in the sandbox and natively.

Each script builds a small jail in the rootfs (its own busybox and applet links) and runs
`busybox chroot JAIL CMD...`: lookups, `..` at the new root, absolute symlinks, forks and
execs inside it, and chroot's errors. The native side runs chrooted in a user namespace as
root, where chroot(2) is allowed (CAP_SYS_CHROOT), like the sandbox's root guest.
"""
from __future__ import annotations

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

MAKE_JAIL = ("mkdir -p /jail/bin /jail/etc /jail/proc; cp /bin/busybox /jail/bin/; "
             "for a in sh ls cat pwd echo readlink mkdir; do ln -s busybox /jail/bin/$a; done; "
             "echo jail > /jail/etc/f; echo outside > /etc/f; ")

CHROOT_SCRIPTS = {
    "lookups": "busybox chroot /jail /bin/sh -c 'pwd; ls /; cat /etc/f; ls -A /proc'",
    "dotdot": "busybox chroot /jail /bin/sh -c 'cd /../..; pwd; cat ../../etc/f; ls ..'",
    "symlinks": "ln -s /etc/f /jail/abs; ln -s ../../../etc /jail/up; "
                "busybox chroot /jail /bin/sh -c 'cat /abs; cat /up/f; readlink /abs'",
    "fork-exec": "busybox chroot /jail /bin/sh -c '(cd /etc && cat f) | cat; "
                 "/bin/sh -c \"cat /etc/f\"; echo $?'",
    "writes": "busybox chroot /jail /bin/sh -c 'echo new > /new; mkdir /d; ls /'; "
              "cat /jail/new; ls /jail",
    "nested": "mkdir -p /jail/inner/bin; cp /bin/busybox /jail/inner/bin/; "
              "ln -s busybox /jail/inner/bin/sh; echo inner > /jail/inner/f; "
              "busybox chroot /jail /bin/busybox chroot /inner /bin/sh -c 'busybox cat /f; cd /..; "
              "busybox ls'",
    "errors": "busybox chroot /nothing /bin/sh; echo $?; busybox chroot /jail/etc/f /bin/sh; "
              "echo $?; busybox chroot /jail /nothing; echo $?",
}


@pytest.mark.parametrize("case", sorted(CHROOT_SCRIPTS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_chroot_matches_native(arch, case, fresh_rootfs, native_arch):
    argv = ["/bin/sh", "-c", MAKE_JAIL + CHROOT_SCRIPTS[case]]
    native = run_native(argv, rootfs_dir=fresh_rootfs(native_arch[arch], "native"), env=FIXED_ENV)
    check_native_oracle(native, 0)
    sandbox = run_sandbox(argv, rootfs=fresh_rootfs(arch, "sandbox"), env=FIXED_ENV,
                          clear_env=True)
    assert_same_behaviour(sandbox, native)
    assert b"unimplemented syscall" not in sandbox.stderr
