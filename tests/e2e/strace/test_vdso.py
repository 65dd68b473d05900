"""The vDSO (kernel_model/vdso/): glibc's clocks run in the process without a system call, as
on Linux, and i386 handlers without SA_RESTORER return through the vDSO's __kernel_sigreturn.

vdso_clocks.c (static, the host's gcc, both arches) calls clock_gettime, gettimeofday and time
through glibc, one clock_gettime as a raw system call, and CLOCK_PROCESS_CPUTIME_ID, which the
vDSO leaves to the kernel; then raises a handled SIGUSR1 (i386 glibc sets SA_RESTORER only when
there is no vDSO). Its `--strace` is strace's line for line, and its report shows the clock
reads in the order they happened on the virtual clock: the system call's read one call cost
after the vDSO's, the next vDSO read one RDTSC read later.
"""
import io
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSegment
from elftools.elf.elffile import ELFFile

from kernel_model.cpu.tsc import TSC_READ_NS
from kernel_model.time.clock import SYSCALL_COST_NS
from kernel_model.vdso.elf_image import vdso_image
from tests.e2e.debian_bins import ensure_debian_bins
from tests.e2e.static_c import build_static
from tests.e2e.strace.compare import REPO_ROOT, compare

pytestmark = pytest.mark.e2e

SOURCE = (Path(__file__).with_name("vdso_clocks.c")).read_text()
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}
HASH_TAGS = {"DT_HASH", "DT_GNU_HASH"}


@pytest.fixture(scope="module", params=("amd64", "i386"))
def program(request, tmp_path_factory):
    arch = request.param
    return arch, build_static(tmp_path_factory, f"vdso_clocks_{arch}", SOURCE, arch=GCC_ARCH[arch])


def test_the_trace_is_strace_s_without_the_clocks_the_vdso_serves(program):
    arch, path = program
    result = compare("vdso_clocks", arch, [str(path)], None)
    clock_calls = [line for line in result.native if line.startswith("clock_gettime")]
    assert len(clock_calls) == 2                     # the raw call and the CPU-time clock
    assert any("sa_flags=0}" in line for line in result.native) == (arch == "i386")
    assert result.sandbox == result.native, result.diff()


def test_the_clocks_read_the_virtual_clock_where_they_run(program):
    _, path = program
    done = subprocess.run([sys.executable, "-m", "trapline", "run", "--", str(path), "report"],
                          capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert done.stdout.splitlines() == [
        f"syscall after vdso: {SYSCALL_COST_NS} ns, vdso after syscall: {TSC_READ_NS} ns",
        "gettimeofday after realtime: 0 us, time: 0 s",
        "AT_SYSINFO_EHDR is the [vdso] ELF image: 1",
        "handler ran: 1"]


def _host_vdso(busybox) -> bytes:
    """The host's [vdso] of an `arch` process: busybox reads its own memory, at the address
    its maps give under setarch -R (the same in both runs, without randomization)."""
    maps = subprocess.run(["setarch", "-R", str(busybox), "cat", "/proc/self/maps"],
                          capture_output=True, text=True, check=True).stdout
    start, end = next(line.split()[0].split("-") for line in maps.splitlines()
                      if line.endswith("[vdso]"))
    pages = (int(end, 16) - int(start, 16)) // 4096
    return subprocess.run(["setarch", "-R", str(busybox), "dd", "if=/proc/self/mem", "bs=4096",
                           f"skip={int(start, 16) // 4096}", f"count={pages}"],
                          capture_output=True, check=True).stdout


def _hash_tags(image: bytes) -> set[str]:
    elf = ELFFile(io.BytesIO(image))
    dynamic = next(seg for seg in elf.iter_segments() if isinstance(seg, DynamicSegment))
    return {tag.entry.d_tag for tag in dynamic.iter_tags()} & HASH_TAGS


@pytest.mark.parametrize("arch", ("amd64", "i386"))
def test_the_image_has_the_hash_tables_of_the_host_s_vdso(arch):
    """Linux links the vDSO with --hash-style=both (arch/x86/entry/vdso/Makefile): the host's
    has DT_HASH, which musl reads, and DT_GNU_HASH, which glibc's loader prefers; so has the
    sandbox's (its lookups: tests/unit/kernel_model/vdso/test_elf_image.py)."""
    host = _hash_tags(_host_vdso(ensure_debian_bins()[arch]["busybox"]))
    assert host == HASH_TAGS
    assert _hash_tags(vdso_image(GCC_ARCH[arch]).data) == host
