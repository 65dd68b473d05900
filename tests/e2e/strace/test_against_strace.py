"""`trapline run --strace` against Debian's strace 6.1 on the same static programs in the same
root (compare.py: normalized only for addresses, pids, random bytes and clock readings).

Every program's trace starts with the same execve line and ends with the same exit line, no
line's `= ` is off strace's column 40, and the programs listed in IDENTICAL give the very same
trace line for line. `python3 -m tests.e2e.strace.compare` prints the share of identical lines
of every program.
"""
import re

import pytest

from tests.e2e.strace.compare import BUSYBOX_PROGRAMS, DYNAMIC_PROGRAMS, compare, sample_argv

pytestmark = pytest.mark.e2e

ARCHES = ("amd64", "i386")
# signals: handlers, pause and sigsuspend interrupted (= ? ERESTARTNOHAND), sigreturn's masks,
# SI_KERNEL/SI_TKILL/SEGV_MAPERR siginfo; sigchain: signals within handlers.
IDENTICAL = ("hello", "compute", "fib", "callchain", "args_env", "signals", "sigchain")
SAMPLES = (*IDENTICAL, "fileio", "alloc")
APPLETS = ("echo", "cat", "true", "false", "sha256sum")


def _check_frame(result) -> None:
    """The first line (strace's own execve of the program) and the last are strace's, and no
    line is misaligned."""
    assert result.sandbox[0] == result.native[0], result.diff()
    assert result.sandbox[-1] == result.native[-1], result.diff()
    assert not [line for line in result.sandbox if "<padding" in line], result.diff()


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("arch", ARCHES)
def test_samples(arch, name):
    result = compare(name, arch, sample_argv(arch, name), None)
    _check_frame(result)
    if name in IDENTICAL:
        assert _tls_entry(result.native) == _tls_entry(result.sandbox), result.diff()


def _tls_entry(lines: list[str]) -> list[str]:
    """The one i386 difference that is the kernels': trapline models a 32-bit kernel, whose
    first TLS entry in the GDT is 6 (GDT_ENTRY_TLS_MIN, arch/x86/include/asm/segment.h), while
    the reference host runs i386 programs on a 64-bit kernel, where it is 12."""
    return [re.sub(r"\(entry_number=(6|12)\)$", "(entry_number=TLS)", line) for line in lines]


@pytest.mark.parametrize("name", APPLETS)
@pytest.mark.parametrize("arch", ARCHES)
def test_busybox_applets(arch, name, rootfs_for):
    """prctl, getrandom in hex with its flags, set_thread_area, ioctl, sendfile..."""
    argv, follow = BUSYBOX_PROGRAMS[name]
    result = compare(name, arch, argv, rootfs_for(arch), follow=follow)
    _check_frame(result)
    assert _tls_entry(result.native) == _tls_entry(result.sandbox), result.diff()


@pytest.mark.parametrize("arch", ARCHES)
def test_a_pipeline_under_dash_f(arch, rootfs_for):
    argv, follow = BUSYBOX_PROGRAMS["sh-pipe"]
    result = compare("sh-pipe", arch, argv, rootfs_for(arch), follow=follow)
    _check_frame(result)
    exits = [line for line in result.sandbox if "+++ exited with" in line]
    assert len(exits) == len([line for line in result.native if "+++ exited with" in line]) == 3


@pytest.mark.parametrize("name", sorted(DYNAMIC_PROGRAMS))
@pytest.mark.parametrize("arch", ARCHES)
def test_dynamic_programs(arch, name, debian_rootfs):
    """ld.so and libc: the frame is strace's (the vDSO-less sandbox maps a page or two more)."""
    _check_frame(compare(name, arch, DYNAMIC_PROGRAMS[name], debian_rootfs[arch]))
