"""Syscall-heavy busybox runs: syscalls per second and the kernel model's cost per syscall.

The kernel's share is measured by timing every SyscallDispatcher.handle call (host time is
fine in a benchmark; it never reaches a guest). Goal (issue 2): <= 10 µs of kernel-model
overhead per syscall. `dd bs=1` is the dense case (two syscalls per byte, little guest work
between them); in `seq` and `sha256sum` each syscall follows a long stretch of guest code,
which leaves the host's caches cold for the Python kernel, so their per-call figure is higher.
"""
import hashlib
import tempfile
import time
from pathlib import Path

from kernel_model.syscalls.dispatch import SyscallDispatcher
from trapline import Sandbox

from .common import ROOT

BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{arch}" / "root" / "bin" / "busybox"


class _Timed:
    """Wraps SyscallDispatcher.handle to count calls and the time spent in the kernel model."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0
        self._orig = SyscallDispatcher.handle

    def __enter__(self):
        timed = self

        def handle(dispatcher, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return timed._orig(dispatcher, *args, **kwargs)
            finally:
                timed.seconds += time.perf_counter() - t0
                timed.calls += 1
        SyscallDispatcher.handle = handle
        return self

    def __exit__(self, *exc):
        SyscallDispatcher.handle = self._orig


def _measure(argv, rootfs):
    with _Timed() as timed:
        t0 = time.perf_counter()
        result = Sandbox(rootfs=rootfs, clear_env=True).run(argv)
        wall = time.perf_counter() - t0
    assert result.exit_code == 0, result
    return wall, timed.calls, timed.seconds, result.stdout


def run() -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bin").mkdir()
        blob = hashlib.shake_256(b"bench").digest(2 << 20)
        (root / "blob").write_bytes(blob)
        for deb_arch in ("amd64", "i386"):
            busybox = Path(str(BUSYBOX).format(arch=deb_arch))
            if not busybox.exists():
                lines.append(f"{deb_arch}: {busybox} missing (run tests/e2e/fetch_debian_bins.py)")
                continue
            (root / "bin" / "busybox").write_bytes(busybox.read_bytes())
            (root / "bin" / "busybox").chmod(0o755)
            for label, argv in (("seq 1 200000", ["/bin/busybox", "seq", "1", "200000"]),
                                ("sha256sum 2MiB", ["/bin/busybox", "sha256sum", "/blob"]),
                                ("dd bs=1 x20000", ["/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null",
                                                    "bs=1", "count=20000"])):
                wall, calls, kernel_s, out = _measure(argv, str(root))
                if label.startswith("sha"):
                    assert out.split()[0].decode() == hashlib.sha256(blob).hexdigest()
                lines.append(f"busybox {label:15} {deb_arch:5}: wall {wall:6.2f} s, {calls:6d} syscalls"
                             f" ({calls / wall:8.0f}/s, {wall / calls * 1e6:7.1f} µs of wall each),"
                             f" kernel model {kernel_s / calls * 1e6:5.1f} µs/syscall (goal <= 10)")
    return lines
