"""The process-model samples print their recorded output in the sandbox, as natively.

Each sample (samples/README.md, "Process-model samples") runs on both arches from
``/bin/NAME`` inside a small rootfs: vfork_status and exec_chain re-exec ``argv[0]``, so
that path must exist in the guest's file system as it does in the native chroot. The
sandbox output must equal samples/expected/NAME.out byte for byte, and so must the
native run's (otherwise the expectation, not trapline, is stale).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.e2e.sandbox_options import run_sandbox_with_options
from tests.e2e.sandbox_runner import (
    assert_same_behaviour,
    compare_results,
    failure_report,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

SAMPLES = Path(__file__).resolve().parents[3] / "samples"
ARCHES = ("i386", "x86_64")
PROCESS_SAMPLES = ("exec_chain", "fork_pipe", "signals", "spawn_tree", "threads", "vfork_nested",
                   "vfork_status")
ENV = {"PATH": "/bin", "HOME": "/", "LANG": "C"}


def sample_rootfs(root: Path, arch: str, name: str) -> Path:
    """A rootfs with the sample at /bin/NAME and the /dev, /proc mount points."""
    for folder in ("bin", "dev", "proc", "work"):
        (root / folder).mkdir(parents=True)
    shutil.copy2(SAMPLES / "bin" / arch / name, root / "bin" / name)
    return root


@pytest.mark.parametrize("name", PROCESS_SAMPLES)
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_process_sample_prints_expected_output(tmp_path, arch, name):
    root = sample_rootfs(tmp_path / "root", arch, name)
    argv = [f"/bin/{name}"]
    expected = (SAMPLES / "expected" / f"{name}.out").read_bytes()
    native = run_native(argv, rootfs_dir=root, cwd="/work", env=ENV)
    assert (native.returncode, native.stdout, native.stderr) == (0, expected, b""), (
        f"the native reference no longer prints samples/expected/{name}.out:\n"
        f"{native.describe()}"
    )
    sandbox = run_sandbox(argv, rootfs=root, cwd="/work", env=ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)
    # Nothing the samples do (pipes, forks, execs) may leave a file behind in the host folder.
    assert sorted(p.name for p in (root / "work").iterdir()) == []


@pytest.mark.parametrize("links", [1, 5])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_exec_chain_length(tmp_path, arch, links):
    """exec_chain N execs itself N times; the pipe token survives every image."""
    root = sample_rootfs(tmp_path / "root", arch, "exec_chain")
    argv = ["/bin/exec_chain", str(links)]
    native = run_native(argv, rootfs_dir=root, cwd="/work", env=ENV)
    assert native.returncode == 0, native.describe()
    assert native.stdout.count(b"after execve: normal pipe open") == links
    sandbox = run_sandbox(argv, rootfs=root, cwd="/work", env=ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)


# Slices from 100 guest instructions (a thread switch inside almost every critical
# section: the mutex and the barrier see real contention and futex waits) to the default.
# Smaller quanta are correct too but take minutes per run (bench/ territory).
QUANTA = (100, 1000, 7919)


@pytest.mark.parametrize("quantum", QUANTA)
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_threads_output_does_not_depend_on_the_quantum(tmp_path, arch, quantum):
    root = sample_rootfs(tmp_path / "root", arch, "threads")
    result = run_sandbox_with_options(["/bin/threads"], ["--quantum", str(quantum)],
                                      rootfs=root, env=ENV, cwd="/work")
    expected = (SAMPLES / "expected" / "threads.out").read_bytes()
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, b""), (
        result.describe()
    )


@pytest.mark.parametrize("arch", ARCHES)
def test_threads_trace_is_identical_across_runs(tmp_path, arch):
    """Same quantum, same run: every thread switch lands at the same instruction."""
    root = sample_rootfs(tmp_path / "root", arch, "threads")
    options = ["--quantum", "1000", "--strace", "-f"]
    first, second = (
        run_sandbox_with_options(["/bin/threads"], options, rootfs=root, env=ENV, cwd="/work")
        for _ in range(2)
    )
    assert first.returncode == 0, first.describe()
    # The four workers were cloned and contended (futex waits) in the traced run; with -f
    # and several threads alive, strace tags each line with the thread id.
    lines = [re.sub(rb"^\[pid +\d+\] ", b"", line) for line in first.stderr.splitlines()]
    assert sum(line.startswith(b"clone(") for line in lines) == 4, first.describe()
    assert any(line.startswith(b"futex(") for line in lines), first.describe()
    assert re.search(rb"^\[pid +10[1-4]\] ", first.stderr, re.M), "worker threads are tagged"
    problems = compare_results(second, first)
    assert not problems, "two identical runs differ (first run shown as 'native'):\n" + (
        failure_report(second, first, problems)
    )
