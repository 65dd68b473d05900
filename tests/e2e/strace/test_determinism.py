"""The determinism contract (docs/ARCHITECTURE.md): same inputs and seed => byte-identical results.

Two sandbox runs with --strace must agree on stdout, stderr (the syscall trace included)
and exit status; the patent alone decides what /dev/urandom yields.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    REPO_ROOT,
    Result,
    compare_results,
    failure_report,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

BB = "/bin/busybox"
URANDOM_16 = [BB, "od", "-An", "-tx1", "-N16", "/dev/urandom"]
STRACE_LINE = re.compile(rb"^(\[pid +\d+\] )?[a-z_0-9]+\(.*\) += ", re.MULTILINE)

COMMANDS = {
    "ls": [BB, "ls", "-la", "/work"],
    "sha256sum": [BB, "sha256sum", "/work/blob.bin"],
    "env-reexec": [BB, "env", "-i", "A=1", "env"],
}


def _sandbox(argv, root, *, seed=0, strace=False) -> Result:
    return run_sandbox(argv, rootfs=root, env=FIXED_ENV, clear_env=True, seed=seed,
                       strace=strace)


def _assert_identical(first: Result, second: Result) -> None:
    assert first.returncode == 0, f"the run itself failed:\n{first.describe()}"
    problems = compare_results(second, first)
    assert not problems, "two identical runs differ (first run shown as 'native'):\n" + (
        failure_report(second, first, problems)
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_busybox_runs_are_byte_identical_with_strace(arch, name, rootfs_for):
    root = rootfs_for(arch)
    first = _sandbox(COMMANDS[name], root, strace=True)
    second = _sandbox(COMMANDS[name], root, strace=True)
    _assert_identical(first, second)
    assert STRACE_LINE.search(first.stderr), (
        f"--strace printed no strace-format line on stderr:\n{first.describe()}"
    )


SAMPLE_ARGS_ENV = [REPO_ROOT / "samples" / "bin" / arch / "args_env" for arch in ("i386", "x86_64")]


@pytest.mark.parametrize("sample", SAMPLE_ARGS_ENV, ids=lambda p: p.parent.name)
def test_sample_runs_are_byte_identical_with_strace(sample):
    argv = [str(sample), "first", "second arg"]
    first = run_sandbox(argv, rootfs=None, env=FIXED_ENV, clear_env=True, strace=True)
    second = run_sandbox(argv, rootfs=None, env=FIXED_ENV, clear_env=True, strace=True)
    _assert_identical(first, second)


def _random_bytes(result: Result) -> bytes:
    assert result.returncode == 0, f"reading /dev/urandom failed:\n{result.describe()}"
    digits = result.stdout.split()
    assert len(digits) == 16 and all(re.fullmatch(rb"[0-9a-f]{2}", d) for d in digits), (
        f"expected 16 hex bytes from od:\n{result.describe()}"
    )
    return bytes(int(d, 16) for d in digits)


@pytest.mark.parametrize("arch", ARCHES)
def test_urandom_depends_on_the_seed_only(arch, rootfs_for):
    root = rootfs_for(arch)
    seed_1 = _random_bytes(_sandbox(URANDOM_16, root, seed=1))
    seed_1_again = _random_bytes(_sandbox(URANDOM_16, root, seed=1))
    seed_2 = _random_bytes(_sandbox(URANDOM_16, root, seed=2))
    assert seed_1 == seed_1_again, "same seed, different /dev/urandom bytes"
    assert seed_1 != seed_2, "seeds 1 and 2 gave the same /dev/urandom bytes"
