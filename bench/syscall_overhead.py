"""Syscall-heavy runs: syscalls per second and the kernel model's cost per syscall.

The kernel's share is measured by timing every SyscallDispatcher.handle call (host time is
fine in a benchmark; it never reaches a guest). Goals: <= 2 µs of kernel-model time per simple
syscall (issue 12: a one-byte read or write, getpid) on both ABIs — i386 `int 0x80` and x86-64
`syscall` — and <= 10 µs for the rest (issue 2).

The simple calls: `dd bs=1` from /dev/zero and from a rootfs file (two syscalls per byte, little
guest work between them) and a loop of bare getpid calls (a tiny program of our own). In `seq`
and `sha256sum` each syscall follows a long stretch of guest code, which leaves the host's
caches cold for the Python kernel, so their per-call figure is higher.

`python3 -m bench.syscall_overhead [--quick]`: --quick leaves out seq and sha256sum.
"""
import hashlib
import sys
import tempfile
import time
from pathlib import Path

from kernel_model.syscalls.dispatch import SyscallDispatcher
from trapline import Sandbox

from .common import ROOT

BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{arch}" / "root" / "bin" / "busybox"
DEB_ARCHES = {"amd64": "x86_64", "i386": "i386"}
GETPIDS = 100_000
# getpid GETPIDS times, then exit(0): nothing but the syscall instruction in the loop.
GETPID_LOOP = {
    "i386": f"mov esi, {GETPIDS}; again: mov eax, 20; int 0x80; dec esi; jnz again; "
            "xor ebx, ebx; mov eax, 1; int 0x80",
    "x86_64": f"mov r12d, {GETPIDS}; again: mov eax, 39; syscall; dec r12d; jnz again; "
              "xor edi, edi; mov eax, 60; syscall",
}


class _Timed:
    """Wraps SyscallDispatcher.handle to count calls and the time spent in the kernel model."""

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0
        self._orig = SyscallDispatcher.handle

    def __enter__(self):
        timed = self
        orig, clock = self._orig, time.perf_counter

        # handle's own signature: a wrapper of (*args, **kwargs) packs and unpacks them on every
        # call, which it timed as the kernel's (~0.5 µs of a ~1.5 µs getpid)
        def handle(dispatcher, thread, abi, frame, *, in_hook):
            t0 = clock()
            try:
                return orig(dispatcher, thread, abi, frame, in_hook=in_hook)
            finally:
                timed.seconds += clock() - t0
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


def _getpid_program(arch: str) -> bytes:
    from tests.unit.kernel_model.tinyelf import tiny_elf       # the kernel tests' ELF builder
    return tiny_elf(arch, GETPID_LOOP[arch])


def _install(root: Path, name: str, data: bytes) -> None:
    (root / "bin" / name).write_bytes(data)
    (root / "bin" / name).chmod(0o755)


def _cases(quick: bool):
    dd = ["/bin/busybox", "dd", "of=/dev/null", "bs=1", "count=20000"]
    yield "getpid x100000", ["/bin/getpids"], 2
    yield "dd bs=1 x20000 zero", dd[:2] + ["if=/dev/zero"] + dd[2:], 2
    yield "dd bs=1 x20000 file", dd[:2] + ["if=/bin/busybox"] + dd[2:], 2
    if not quick:
        yield "seq 1 200000", ["/bin/busybox", "seq", "1", "200000"], 10
        yield "sha256sum 2MiB", ["/bin/busybox", "sha256sum", "/blob"], 10


def run(quick: bool = False) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bin").mkdir()
        blob = hashlib.shake_256(b"bench").digest(2 << 20)
        (root / "blob").write_bytes(blob)
        for deb_arch, arch in DEB_ARCHES.items():
            busybox = Path(str(BUSYBOX).format(arch=deb_arch))
            if not busybox.exists():
                lines.append(f"{deb_arch}: {busybox} missing (run tests/e2e/fetch_debian_bins.py)")
                continue
            _install(root, "busybox", busybox.read_bytes())
            _install(root, "getpids", _getpid_program(arch))
            for label, argv, goal in _cases(quick):
                wall, calls, kernel_s, out = _measure(argv, str(root))
                if label.startswith("sha"):
                    assert out.split()[0].decode() == hashlib.sha256(blob).hexdigest()
                lines.append(f"{label:19} {deb_arch:5}: wall {wall:6.2f} s, {calls:6d} syscalls"
                             f" ({calls / wall:8.0f}/s, {wall / calls * 1e6:7.1f} µs of wall each),"
                             f" kernel model {kernel_s / calls * 1e6:5.2f} µs/syscall"
                             f" (goal <= {goal})")
    return lines


if __name__ == "__main__":
    for line in run(quick="--quick" in sys.argv):
        print(line, flush=True)
