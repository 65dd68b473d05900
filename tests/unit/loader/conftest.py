"""Fixtures: the sample binaries (or stand-ins built with zig when they are not built yet)."""
from __future__ import annotations

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


@pytest.fixture(scope="session")
def busybox_static() -> Path:
    """Debian's static busybox (amd64), fetched and cached by the e2e setup; a failure to get
    it fails the test with apt's reason instead of skipping it."""
    from tests.e2e.debian_bins import DebianBinsError, ensure_debian_bins
    try:
        return ensure_debian_bins()["amd64"]["busybox"]
    except DebianBinsError as e:
        pytest.fail(f"Debian busybox-static is not available: {e}")
