"""MAP_SHARED across processes (issue 32), on both architectures: samples/shared_mem.c shares an
anonymous page with a forked child, sleeps on a futex in it that the child wakes, and shares a
file's page with a child that execs and maps the file anew, then checks msync wrote it back.

The native reference runs chrooted into the rootfs, which has no /dev/shm mounted, so it makes
its file in /work; the sandbox runs it in /work and in its own /dev/shm (the tmpfs of
kernel_model/fs/shmfs.py): all three print the same. Without shared pages the child's stores
stay in its copy and the parent's futex wait never ends (the run times out); and a FUTEX_WAKE
that leaves the word unchanged, the waker exiting right after it, was lost when the ignored
SIGCHLD reached the woken parent first (its wait slept again until ETIMEDOUT: LTP's checkpoints,
fork04)."""
import shutil
from pathlib import Path

import pytest

from tests.e2e.sandbox_runner import run_native, run_sandbox

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"
ENV = {"PATH": "/bin", "HOME": "/", "LANG": "C"}
EXPECTED = (b"anon: shared 0x1234, private 7\n"
            b"futex: woken with flag 1\n"
            b"futex: a bare wake then exit: wait returned 0\n"
            b"file: counter 1 after the reader's exec\n"
            b"file: after msync the file holds magic ok, counter 1\n")


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_shared_memory_crosses_fork_exec_and_futexes(tmp_path: Path, arch: str):
    root = tmp_path / "root"
    for sub in ("bin", "dev", "proc", "work"):
        (root / sub).mkdir(parents=True)
    shutil.copy2(SAMPLES / arch / "shared_mem", root / "bin" / "shared_mem")
    native = run_native(["/bin/shared_mem", "/work"], rootfs_dir=root, cwd="/work", env=ENV)
    assert (native.returncode, native.stdout) == (0, EXPECTED), native.stderr
    for directory in ("/work", "/dev/shm"):
        sandbox = run_sandbox(["/bin/shared_mem", directory], rootfs=root, cwd="/work", env=ENV,
                              clear_env=True, timeout=300)
        assert (sandbox.returncode, sandbox.stdout) == (0, EXPECTED), sandbox.stderr
    assert list((root / "work").iterdir()) == []        # the overlay left the host folder alone
