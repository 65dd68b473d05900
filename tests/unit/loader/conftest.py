"""Fixtures: the sample binaries (or stand-ins built with zig when they are not built yet)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples"
ZIG_TARGETS = {"i386": "x86-linux-musl", "x86_64": "x86_64-linux-musl"}
FALLBACK_SOURCE = {
    "hello": '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n',
    "fib": ("__attribute__((noinline)) unsigned long fib(unsigned n)"
            "{return n<2?n:fib(n-1)+fib(n-2);}\nint main(void){return (int)(fib(20)&1);}\n"),
}
BUSYBOX_CANDIDATES = (Path("/tmp/deb/x/bin/busybox"),)  # where a developer unpacked the .deb


def _zig_build(source: Path, target: str, out: Path) -> None:
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", target, "-O1", "-static", "-fno-pie", "-no-pie",
           "-fno-omit-frame-pointer", "-g0", str(source), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)


@pytest.fixture(scope="session")
def sample_binary(tmp_path_factory):
    """sample_binary(arch, name) -> path of samples/bin/ARCH/NAME, built into a tmp dir if absent."""
    built: dict[tuple[str, str], Path] = {}

    def get(arch: str, name: str) -> Path:
        committed = SAMPLES / "bin" / arch / name
        if committed.is_file():
            return committed
        if (arch, name) not in built:
            work = tmp_path_factory.mktemp(f"zig-{arch}-{name}")
            source = SAMPLES / f"{name}.c"
            if not source.is_file():
                source = work / f"{name}.c"
                source.write_text(FALLBACK_SOURCE[name])
            _zig_build(source, ZIG_TARGETS[arch], work / name)
            built[(arch, name)] = work / name
        return built[(arch, name)]

    return get


def _download_busybox(dest: Path) -> Path | None:
    """Debian's busybox-static through apt, the way the e2e setup gets it."""
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        return None
    try:
        subprocess.run(["apt-get", "download", "busybox-static"], cwd=dest, check=True, capture_output=True,
                       timeout=300)
        deb = next(dest.glob("busybox-static_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest / "x")], check=True, capture_output=True, timeout=120)
    except (subprocess.SubprocessError, OSError, StopIteration):
        return None
    found = dest / "x" / "bin" / "busybox"
    return found if found.is_file() else None


@pytest.fixture(scope="session")
def busybox_static(tmp_path_factory) -> Path:
    for candidate in BUSYBOX_CANDIDATES:
        if candidate.is_file() and candidate.read_bytes()[:4] == b"\x7fELF":
            return candidate
    found = _download_busybox(tmp_path_factory.mktemp("busybox"))
    if found is None:
        pytest.skip("Debian busybox-static is not available (no apt access)")
    return found
