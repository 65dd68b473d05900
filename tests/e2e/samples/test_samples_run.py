"""Every sample, on both architectures, behaves in the sandbox exactly as it does natively.

The native reference runs chrooted into the same rootfs (tests/e2e/sandbox_runner.py), so
paths, argv[0] and the working directory are identical on both sides.
"""
import shutil
from pathlib import Path

import pytest

from tests.e2e.sandbox_runner import assert_same_behaviour, run_native, run_sandbox
from tests.quick_profile import alternates

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"
ENV = {"PATH": "/bin", "HOME": "/", "LANG": "C"}
CASES = {
    "hello": ([], 0),
    "args_env": (["one", "two words", ""], 0),
    "fib": (["18"], 0),
    "fileio": ([], 0),
    "alloc": ([], 0),
    "compute": (["20000"], 0),
    # AF_UNIX socketpair+fork, SCM_RIGHTS, a server and client on a path and an abstract
    # name under epoll, eventfd, and the errnos: the same lines as natively (issue 32)
    "sockets": ([], 0),
    # System V message queues, semaphores and shared memory (i386 through ipc(2))
    "sysv_ipc": ([], 0),
}


@pytest.fixture
def sample_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for sub in ("bin", "dev", "proc", "work"):
        (root / sub).mkdir(parents=True)
    return root


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("name", sorted(CASES))
@alternates("arch")
def test_sample_matches_native(sample_root: Path, arch: str, name: str):
    args, status = CASES[name]
    shutil.copy2(SAMPLES / arch / name, sample_root / "bin" / name)
    argv = [f"/bin/{name}", *args]
    native = run_native(argv, rootfs_dir=sample_root, cwd="/work", env=ENV)
    assert native.returncode == status, native.stderr
    sandbox = run_sandbox(argv, rootfs=sample_root, cwd="/work", env=ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)
    # The overlay kept the host folder untouched (fileio creates and removes files).
    assert sorted(p.name for p in (sample_root / "work").iterdir()) == []


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_guest_fault_is_reported_with_signal_status(tmp_path: Path, arch: str):
    """A guest that dies by a signal exits 128+N with a one-line report, never a traceback."""
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(SAMPLES / arch / "fib", root / "bin" / "fib")
    # fib with a huge n recurses until the 8 MiB stack is gone: SIGSEGV on the guard page.
    result = run_sandbox(["/bin/fib", "-1"], rootfs=root, clear_env=True, timeout=300)
    assert result.returncode == 128 + 11, result.stderr
    assert b"killed by SIGSEGV" in result.stderr
    assert b"Traceback" not in result.stderr
