"""The vDSO (kernel_model/vdso/): glibc's clocks run in the process without a system call, as
on Linux, and i386 handlers without SA_RESTORER return through the vDSO's __kernel_sigreturn.

vdso_clocks.c (static, the host's gcc, both arches) calls clock_gettime, gettimeofday and time
through glibc, one clock_gettime as a raw system call, and CLOCK_PROCESS_CPUTIME_ID, which the
vDSO leaves to the kernel; then raises a handled SIGUSR1 (i386 glibc sets SA_RESTORER only when
there is no vDSO). Its `--strace` is strace's line for line, and its report shows the clock
reads in the order they happened on the virtual clock: the system call's read one call cost
after the vDSO's, the next vDSO read one RDTSC read later.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_model.cpu.tsc import TSC_READ_NS
from kernel_model.time.clock import SYSCALL_COST_NS
from tests.e2e.static_c import build_static
from tests.e2e.strace.compare import REPO_ROOT, compare

pytestmark = pytest.mark.e2e

SOURCE = (Path(__file__).with_name("vdso_clocks.c")).read_text()
GCC_ARCH = {"amd64": "x86_64", "i386": "i386"}


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
