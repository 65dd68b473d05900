"""Named pipes in write-through mode, with Debian's busybox, in the sandbox and natively: the
fifo is a real host fifo in the rootfs folder (mknodat through the directory's descriptor), and
its readers and writers meet in one pipe although each open looks the inode up afresh."""
from __future__ import annotations

import stat

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_native,
    run_sandbox,
)
from tests.e2e.run.test_fifo_affinity import FIFO_SCRIPTS
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("case", sorted(FIFO_SCRIPTS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_writable_fifo_matches_native(arch, case, fresh_rootfs, native_arch):
    argv = ["/bin/sh", "-c", FIFO_SCRIPTS[case]]
    native_root = fresh_rootfs(native_arch[arch], "native")
    native = run_native(argv, rootfs_dir=native_root, env=FIXED_ENV)
    check_native_oracle(native, 0)
    rootfs = fresh_rootfs(arch, "sandbox")
    sandbox = run_sandbox(argv, rootfs=rootfs, env=FIXED_ENV, clear_env=True, writable=True)
    assert_same_behaviour(sandbox, native)
    assert fifos_in(rootfs / "tmp") == fifos_in(native_root / "tmp")   # the same ones left


def fifos_in(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if stat.S_ISFIFO(p.lstat().st_mode))
