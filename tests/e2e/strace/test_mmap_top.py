"""Where top-down mmap allocations start (kernel_model/memory/layout.py mmap_base), against
the host kernel: natively, without address randomization (setarch -R), the vDSO is the first
mapping placed top-down from mmap_base (arch/x86/entry/vdso/vma.c map_vdso: get_unmapped_area
with no hint), so its end is the mmap area's top. An i386 program runs as a compat task
(0xF7FFE000: 128 MiB below 0xFFFFE000); strace's lines of a program that trims a mapping to an
alignment (glibc's and musl's allocators) depend on it."""
import subprocess

import pytest

from kernel_model.memory.layout import LAYOUTS
from tests.e2e.debian_bins import ensure_debian_bins
from tests.e2e.strace.compare import SAMPLE_ARCH

pytestmark = pytest.mark.e2e


def _native_vdso_end(busybox) -> int:
    maps = subprocess.run(["setarch", "-R", str(busybox), "cat", "/proc/self/maps"],
                          capture_output=True, text=True, check=True).stdout
    ends = [int(line.split("-")[1].split()[0], 16) for line in maps.splitlines()
            if line.endswith("[vdso]")]
    assert len(ends) == 1, maps
    return ends[0]


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_the_mmap_area_starts_where_the_host_kernel_starts_it(arch):
    busybox = ensure_debian_bins()[arch]["busybox"]
    assert LAYOUTS[SAMPLE_ARCH[arch]].mmap_base == _native_vdso_end(busybox)
