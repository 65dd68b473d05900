"""The stale-handle escape of issue 13, with Debian's busybox in write-through mode, in the
sandbox and natively: a shell holds /f/outside open on fd 3, renames /f away and puts at /f a
symlink to a real host folder (made by the guest, or a symlink of the rootfs renamed there).
Through fd 3 (/proc/self/fd/3: ls, cat, cd, readlink, stat) both sides see the renamed
directory and nothing of the host folder, which the native side cannot reach from its chroot
and the sandbox must not reach through its host paths. A shell reaches the old directory by
its magic link (the kept name follows the rename: fs/renamed.py); getdents and fstat on the
old descriptor itself, which reach the host directory object, are checked by the guest
programs of tests/unit/kernel_model/fs/test_stale_handles.py.
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

SETUP = "mkdir -p /f/outside; echo in > /f/outside/inner; exec 3</f/outside; mv /f /g; "
PLANT = {"made": "ln -s {bait} /f; ", "renamed": "mv /hostlink /f; "}
LOOK = ("ls -a /proc/self/fd/3/; cat /proc/self/fd/3/inner; readlink /proc/self/fd/3; "
        "cd /proc/self/fd/3 && ls && pwd -P && cat inner; ls /f/outside 2>&1; "
        "stat -c '%h %F %s' /proc/self/fd/3/ .; ls /f 2>&1; echo done")


@pytest.mark.parametrize("how", sorted(PLANT))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_old_handle_shows_what_it_opened(arch, how, fresh_rootfs, native_arch, tmp_path):
    bait = tmp_path / "bait"
    (bait / "outside").mkdir(parents=True)
    (bait / "outside" / "HOSTFILE").write_bytes(b"HOSTSECRET\n")
    (bait / "outside" / "inner").write_bytes(b"HOSTSECRET\n")
    argv = ["/bin/sh", "-c", SETUP + PLANT[how].format(bait=bait) + LOOK]
    sides = {}
    for side, rootfs_arch in (("native", native_arch[arch]), ("sandbox", arch)):
        rootfs = fresh_rootfs(rootfs_arch, side)
        (rootfs / "hostlink").symlink_to(bait)
        sides[side] = rootfs
    native = run_native(argv, rootfs_dir=sides["native"], env=FIXED_ENV)
    check_native_oracle(native, 0)
    sandbox = run_sandbox(argv, rootfs=sides["sandbox"], env=FIXED_ENV, clear_env=True,
                          writable=True)
    assert_same_behaviour(sandbox, native)
    assert b"HOST" not in sandbox.stdout + sandbox.stderr
    assert sorted(p.name for p in (bait / "outside").iterdir()) == ["HOSTFILE", "inner"]
